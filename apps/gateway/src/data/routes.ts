import { Router, type Request } from 'express';
import { parseInput } from '@pds/http';
import { callerOf, tenantOf } from '../context';
import { parseListQuery, tableSchema, type Table } from './input';
import type { DataService } from './service';

// The endpoint may span several path segments (`/data/ns/feed/likes`), as in the original.
const TABLE = '/api/v2.6/data/:namespace/*endpoint';

function tableOf(req: Request): Table {
  const { namespace, endpoint } = req.params as { namespace: string; endpoint: string[] };
  return parseInput(tableSchema, { namespace, endpoint: endpoint.join('/') }, 'path');
}

/** `GET/POST/DELETE /api/v2.6/data/:namespace/:endpoint`: the data tables. */
export function dataRoutes(data: DataService): Router {
  const router = Router();

  router.get(TABLE, async (req, res) => {
    // Identity first: an anonymous caller learns nothing, not even which names are valid.
    const caller = callerOf(req);
    const table = tableOf(req);
    res.json(await data.list(tenantOf(req).instance.id, caller, table, parseListQuery(req.query)));
  });

  router.post(TABLE, async (req, res) => {
    const caller = callerOf(req);
    const table = tableOf(req);
    const { saved, single } = await data.create(tenantOf(req).instance.id, caller, table, req.body);
    res.status(201).json(single ? saved[0] : saved);
  });

  router.delete(TABLE, async (req, res) => {
    const caller = callerOf(req);
    const deleted = await data.deleteAll(tenantOf(req).instance.id, caller, tableOf(req));
    res.json({ message: 'All records deleted', deleted });
  });

  return router;
}
