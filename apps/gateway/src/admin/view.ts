// An instance as the admin API answers it: state, dates, usage, and quotas both as they apply and as
// the operator set them. Optional fields without a value are omitted, as everywhere in the API.
import { z } from 'zod';
import type { InstanceOverview, QuotaDefaults, StateChange } from '@pds/db';
import type { InstanceDetails } from './service';

const STATES = ['active', 'suspended', 'closing'] as const;
/** A count or a number of bytes. */
const amount = z.number().int().nonnegative();

const stateChange = z.object({ state: z.enum(STATES), reason: z.string(), actor: z.string(), at: z.iso.datetime() });

export const instanceBody = z.object({
  address: z.string(),
  state: z.enum(STATES),
  stateReason: z.string().optional(),
  stateChangedAt: z.iso.datetime().optional(),
  closeAfter: z.iso.datetime().optional().describe('While closing: when the grace period ends and the instance is erased'),
  createdAt: z.iso.datetime(),
  lastActiveAt: z.iso.datetime().optional().describe('When a token was last issued (log-in or hourly refresh), to the hour'),
  dexState: z.enum(['pending', 'registered', 'failed']).describe('Where its registration with dex stands'),
  ownerEmail: z.string().optional(),
  usage: z.object({ files: amount, fileBytes: amount, records: amount, recordBytes: amount }),
  quota: z.object({ bytes: amount, recordsBytes: amount }).describe('The quotas that apply'),
  customQuota: z
    .object({ bytes: amount.optional(), recordsBytes: amount.optional() })
    .describe("The operator's own quotas for this instance; an absent one is the cluster's default"),
});

export const instanceDetailsBody = instanceBody.extend({
  history: z.array(stateChange).describe('State changes, newest first'),
  accounts: z.object({ owner: amount, user: amount, application: amount }).describe('Its accounts by kind'),
  apps: z
    .array(z.object({ appId: z.string(), title: z.string().optional(), version: amount, setup: z.boolean(), enabled: z.boolean() }))
    .describe('The apps dex pushed to it, and whether its owner set each up'),
  recentEvents: z
    .array(z.object({ type: z.string(), actorKind: z.string(), at: z.iso.datetime() }))
    .describe('Its latest changes, newest first: their kind and who made them, never what they touched'),
  portability: z
    .array(
      z.object({
        kind: z.enum(['export', 'import']),
        status: z.string(),
        createdAt: z.iso.datetime(),
        finishedAt: z.iso.datetime().optional(),
        expiresAt: z.iso.datetime().optional(),
      }),
    )
    .describe('Its latest exports and imports, newest first'),
});

/** `{ [name]: value }` when there is a value, else nothing: optional fields are omitted, never null. */
const present = <T>(name: string, value: T | null, show: (value: T) => unknown = (v) => v) =>
  value === null ? {} : { [name]: show(value) };

export function instanceView(instance: InstanceOverview, defaults: QuotaDefaults): z.output<typeof instanceBody> {
  const iso = (date: Date) => date.toISOString();
  return {
    address: instance.address,
    state: instance.state,
    ...present('stateReason', instance.stateReason),
    ...present('stateChangedAt', instance.stateChangedAt, iso),
    ...present('closeAfter', instance.closeAfter, iso),
    createdAt: iso(instance.createdAt),
    ...present('lastActiveAt', instance.lastActiveAt, iso),
    dexState: instance.dexState,
    ...present('ownerEmail', instance.ownerEmail),
    usage: instance.usage,
    quota: { bytes: instance.quotaBytes ?? defaults.bytes, recordsBytes: instance.quotaRecordsBytes ?? defaults.recordsBytes },
    customQuota: { ...present('bytes', instance.quotaBytes), ...present('recordsBytes', instance.quotaRecordsBytes) },
  };
}

const changeView = (change: StateChange) => ({ ...change, at: change.at.toISOString() });

export function instanceDetailsView(instance: InstanceDetails, defaults: QuotaDefaults): z.output<typeof instanceDetailsBody> {
  const iso = (date: Date) => date.toISOString();
  return {
    ...instanceView(instance, defaults),
    history: instance.history.map(changeView),
    accounts: instance.accounts,
    apps: instance.apps.map(({ title, ...app }) => ({ ...app, ...present('title', title) })),
    recentEvents: instance.recentEvents.map((event) => ({ ...event, at: iso(event.at) })),
    portability: instance.portability.map((job) => ({
      kind: job.kind,
      status: job.status,
      createdAt: iso(job.createdAt),
      ...present('finishedAt', job.finishedAt, iso),
      ...present('expiresAt', job.expiresAt, iso),
    })),
  };
}
