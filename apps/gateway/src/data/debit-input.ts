// What a data debit's setup may say (the original's DataDebitSetupRequest), checked and bounded.
import type { DebitTerms, UserRepository } from '@pds/db';
import { ApiError, parseInput } from '@pds/http';
import { z } from 'zod';
import { bundleSchema } from './bundle-input';
import { requireStorable } from './input';

export const DEBIT_KEY = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;
const MAX_PERIOD_SECONDS = 10 * 365 * 24 * 3600;

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048);

/** The original's DataDebitSetupRequest (plus `holderUserId`: the plain user who may read the values). */
const setupSchema = z.object({
  dataDebitKey: z.string().optional(),
  purpose: z.string().min(1).max(4096),
  start: z.iso.datetime({ offset: true }),
  period: z.number().int().min(1).max(MAX_PERIOD_SECONDS),
  termsUrl: httpUrl,
  cancelAtPeriodEnd: z.boolean().default(false),
  requestClientName: z.string().min(1).max(256),
  requestClientUrl: httpUrl,
  requestClientLogoUrl: httpUrl,
  requestApplicationId: z.string().max(128).optional(),
  requestDescription: z.string().max(16_384).optional(),
  holderUserId: z.uuid().optional(),
  bundle: bundleSchema,
});

/** A debit's setup request, checked: who asks, on which terms, over which bundle. */
export async function parseDebitSetup(users: UserRepository, instanceId: string, key: string, input: unknown) {
  if (!DEBIT_KEY.test(key)) throw ApiError.badRequest('dataDebitKey: must be 1-128 of letters, digits, _ . and -');
  requireStorable(input, 'body');
  const setup = parseInput(setupSchema, input);
  if (setup.dataDebitKey !== undefined && setup.dataDebitKey !== key)
    throw ApiError.badRequest(`dataDebitKey: must equal the path's key ${key}`);
  // The holder is a plain user of this instance (apps hold the debits their setup creates).
  if (setup.holderUserId && (await users.findById(instanceId, setup.holderUserId))?.kind !== 'user') {
    throw ApiError.notFound(`User ${setup.holderUserId} not found`);
  }
  const request = {
    requestClientName: setup.requestClientName,
    requestClientUrl: setup.requestClientUrl,
    requestClientLogoUrl: setup.requestClientLogoUrl,
    ...(setup.requestApplicationId ? { requestApplicationId: setup.requestApplicationId } : {}),
    ...(setup.requestDescription ? { requestDescription: setup.requestDescription } : {}),
    ...(setup.holderUserId ? { holderId: setup.holderUserId } : {}),
  };
  const terms: DebitTerms = {
    purpose: setup.purpose,
    start: new Date(setup.start),
    period: setup.period,
    cancelAtPeriodEnd: setup.cancelAtPeriodEnd,
    termsUrl: setup.termsUrl,
    bundleName: setup.bundle.name,
  };
  return { request, terms, bundle: setup.bundle };
}
