// The owner's data browser: which tables exist (`GET /api/v2.6/data/sources`, as the original), and
// removal of chosen records (`DELETE /api/v2.6/data?records=<id>,<id>`, as hat-js's hatData().delete sends it).
import { Router } from 'express';
import { z } from 'zod';
import type { DataTableRepository } from '@pds/db';
import { parseInput } from '@pds/http';
import { ownerOf, tenantOf } from '../context';

const recordIds = z.object({
  records: z
    .string()
    .transform((value) => value.split(','))
    .pipe(z.array(z.uuid('must be record ids separated by commas')).min(1).max(1000)),
});

export function dataBrowseRoutes(tables: DataTableRepository): Router {
  const router = Router();

  router.get('/api/v2.6/data/sources', async (req, res) => {
    ownerOf(req);
    res.json(await tables.sources(tenantOf(req).instance.id));
  });

  router.delete('/api/v2.6/data', async (req, res) => {
    ownerOf(req);
    const { records } = parseInput(recordIds, req.query, 'query');
    const deleted = await tables.deleteRecords(tenantOf(req).instance.id, records);
    res.json({ message: 'All records deleted', deleted });
  });

  return router;
}
