import { Router } from 'express';
import { callerOf, tenantOf } from '../context';
import type { DataAccessPolicy } from './access';
import type { DebitService } from './debits';

const BUNDLE = '/api/v2.6/data-bundle/:name';
const DEBIT = '/api/v2.6/data-debit';

/** Bundles (owner only) and data debits: the owner manages them, the holder reads the values. */
export function debitRoutes(debits: DebitService, access: DataAccessPolicy): Router {
  const router = Router();
  const instanceOf = (req: Parameters<typeof tenantOf>[0]) => tenantOf(req).instance.id;
  const param = (value: unknown) => value as string;

  router.post(BUNDLE, async (req, res) => {
    access.requireOwner(req.caller);
    res.status(201).json(await debits.saveBundle(instanceOf(req), param(req.params.name), req.body));
  });

  router.get(BUNDLE, async (req, res) => {
    access.requireOwner(req.caller);
    const instanceId = instanceOf(req);
    res.json(await debits.bundleValues(instanceId, await debits.bundleStructure(instanceId, param(req.params.name))));
  });

  router.get(`${BUNDLE}/structure`, async (req, res) => {
    access.requireOwner(req.caller);
    res.json(await debits.bundleStructure(instanceOf(req), param(req.params.name)));
  });

  router.get(DEBIT, async (req, res) => {
    access.requireOwner(req.caller);
    res.json(await debits.list(instanceOf(req)));
  });

  router.get(`${DEBIT}/:key`, async (req, res) => {
    // Identity first: an anonymous caller does not learn which debits exist.
    const caller = callerOf(req);
    const debit = await debits.get(instanceOf(req), param(req.params.key));
    access.requireDebitReader(caller, debit.holderId);
    res.json(debits.view(debit));
  });

  router.post(`${DEBIT}/:key`, async (req, res) => {
    access.requireOwner(req.caller);
    res.status(201).json(await debits.register(instanceOf(req), param(req.params.key), req.body));
  });

  router.put(`${DEBIT}/:key`, async (req, res) => {
    access.requireOwner(req.caller);
    res.json(await debits.update(instanceOf(req), param(req.params.key), req.body));
  });

  router.get(`${DEBIT}/:key/enable`, async (req, res) => {
    access.requireOwner(req.caller);
    res.json(await debits.enable(instanceOf(req), param(req.params.key)));
  });

  router.get(`${DEBIT}/:key/disable`, async (req, res) => {
    access.requireOwner(req.caller);
    res.json(await debits.disable(instanceOf(req), param(req.params.key), req.query.atPeriodEnd === 'true'));
  });

  router.get(`${DEBIT}/:key/values`, async (req, res) => {
    res.json(await debits.values(instanceOf(req), callerOf(req), param(req.params.key), access));
  });

  return router;
}
