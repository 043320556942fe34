import { Router, type Request } from 'express';
import { parseInput } from '@pds/http';
import { callerOf, tenantOf } from '../context';
import { parseListQuery, parseRecordIds, tableSchema, type Table } from './input';
import type { DataService } from './service';

// The endpoint may span several path segments (`/data/ns/feed/likes`), as in the original.
const TABLE = '/api/v2.6/data/:namespace/*endpoint';

function tableOf(req: Request): Table {
  const { namespace, endpoint } = req.params as { namespace: string; endpoint: string[] };
  return parseInput(tableSchema, { namespace, endpoint: endpoint.join('/') }, 'path');
}

const DATA = '/api/v2.6/data';

/**
 * `GET/POST/DELETE /api/v2.6/data/:namespace/:endpoint`: the data tables; records by id
 * (`/data-record/:id`, `PUT /data`, `DELETE /data?records=`), batches, links and the list of tables.
 */
export function dataRoutes(data: DataService): Router {
  const router = Router();

  router.get(`${DATA}/sources`, async (req, res) => {
    res.json(await data.sources(tenantOf(req), callerOf(req)));
  });

  // Status codes as the original: 201 for an update, 200 for a delete.
  router.put(DATA, async (req, res) => {
    res.status(201).json(await data.update(tenantOf(req), callerOf(req), { body: req.body }));
  });

  router.delete(DATA, async (req, res) => {
    const caller = callerOf(req);
    const deleted = await data.remove(tenantOf(req), caller, { recordIds: parseRecordIds(req.query) });
    res.json({ message: 'All records deleted', deleted });
  });

  router.get('/api/v2.6/data-record/:recordId', async (req, res) => {
    const caller = callerOf(req);
    const [recordId] = parseRecordIds({ records: req.params.recordId });
    res.json(await data.get(tenantOf(req), caller, { recordId: recordId as string }));
  });

  router.post('/api/v2.6/data-batch', async (req, res) => {
    res.status(201).json(await data.batch(tenantOf(req), callerOf(req), { body: req.body }));
  });

  router.post('/api/v2.6/data-link', async (req, res) => {
    const caller = callerOf(req);
    await data.link(tenantOf(req), caller, { recordIds: parseRecordIds(req.query) });
    res.status(201).json({ message: 'Grouping registered' });
  });

  router.get(TABLE, async (req, res) => {
    // Identity first: an anonymous caller learns nothing, not even which names are valid.
    const caller = callerOf(req);
    const table = tableOf(req);
    res.json(await data.list(tenantOf(req), caller, { table, query: parseListQuery(req.query) }));
  });

  router.post(TABLE, async (req, res) => {
    const caller = callerOf(req);
    const table = tableOf(req);
    const skipErrors = req.query.skipErrors === 'true';
    const { saved, single } = await data.create(tenantOf(req), caller, { table, body: req.body, skipErrors });
    res.status(201).json(single ? saved[0] : saved);
  });

  router.delete(TABLE, async (req, res) => {
    const caller = callerOf(req);
    const deleted = await data.deleteAll(tenantOf(req), caller, { table: tableOf(req) });
    res.json({ message: 'All records deleted', deleted });
  });

  return router;
}
