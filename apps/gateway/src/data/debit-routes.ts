import { Router } from 'express';
import { callerOf, tenantOf } from '../context';
import type { DebitService } from './debits';

const BUNDLE = '/api/v2.6/data-bundle/:name';
const DEBIT = '/api/v2.6/data-debit';

/** Bundles (owner only) and data debits: the owner manages them, the holder reads the values. */
export function debitRoutes(debits: DebitService): Router {
  const router = Router();
  const name = (req: { params: Record<string, unknown> }) => req.params.name as string;
  const key = (req: { params: Record<string, unknown> }) => req.params.key as string;

  router.post(BUNDLE, async (req, res) => {
    res.status(201).json(await debits.saveBundle(tenantOf(req), callerOf(req), { name: name(req), body: req.body }));
  });

  router.get(BUNDLE, async (req, res) => {
    res.json(await debits.bundleValues(tenantOf(req), callerOf(req), { name: name(req) }));
  });

  router.get(`${BUNDLE}/structure`, async (req, res) => {
    res.json(await debits.bundleStructure(tenantOf(req), callerOf(req), { name: name(req) }));
  });

  router.get(DEBIT, async (req, res) => {
    res.json(await debits.list(tenantOf(req), callerOf(req)));
  });

  router.get(`${DEBIT}/:key`, async (req, res) => {
    res.json(await debits.get(tenantOf(req), callerOf(req), { key: key(req) }));
  });

  router.post(`${DEBIT}/:key`, async (req, res) => {
    res.status(201).json(await debits.register(tenantOf(req), callerOf(req), { key: key(req), body: req.body }));
  });

  router.put(`${DEBIT}/:key`, async (req, res) => {
    res.json(await debits.update(tenantOf(req), callerOf(req), { key: key(req), body: req.body }));
  });

  router.get(`${DEBIT}/:key/enable`, async (req, res) => {
    res.json(await debits.enable(tenantOf(req), callerOf(req), { key: key(req) }));
  });

  router.get(`${DEBIT}/:key/disable`, async (req, res) => {
    res.json(await debits.disable(tenantOf(req), callerOf(req), { key: key(req), atPeriodEnd: req.query.atPeriodEnd === 'true' }));
  });

  router.get(`${DEBIT}/:key/values`, async (req, res) => {
    res.json(await debits.values(tenantOf(req), callerOf(req), { key: key(req) }));
  });

  return router;
}
