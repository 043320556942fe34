// Webhook delivery. A scan (every half second, in the gateway worker) queues one job per subscription that
// is behind its instance's events; the job id is the subscription's, so a subscription has one job at a
// time and its events go out in order. The job POSTs each event the app may see, signed, and moves the
// subscription's cursor after each; a failure throws, and BullMQ tries again after a wait that doubles up
// to WEBHOOK_MAX_BACKOFF, until 24 h after the first failure, when the subscription is marked failed
// (the owner sees it). The cursor lives in the database, so a worker killed mid-delivery loses nothing:
// its job is picked up again (packages/queue WORKER_OPTIONS) and the event in flight is sent again, with
// the same Idempotency-Key (at least once). The cursor moves only from where this run found it, so a run
// that overlaps another (a worker whose lock lapsed while it still ran) stops after its first repeat
// instead of sending the rest again out of order.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Job } from 'bullmq';
import {
  ApplicationRepository,
  DataGrantRepository,
  EventRepository,
  InstanceRepository,
  WebhookRepository,
  type GatewayDb,
  type StoredEvent,
} from '@pds/db';
import { Producer, QUEUE_NAMES, runQueue, type QueueOptions } from '@pds/queue';
import { httpRequest, type Logger } from '@pds/runtime';
import { openPrivateKey } from '@pds/tokens';
import { signBody, SIGNATURE_HEADER } from '../events/signature';
import { EventVisibility, publicEvent } from '../events/visibility';

/** Retries stop this long after the first failure of the event owed. */
export const GIVE_UP_AFTER_MS = 24 * 3600 * 1000;
const PAGE = 50;
const TIMEOUT_MS = 10_000;

export interface WebhookDeliveryDeps {
  webhooks: WebhookRepository;
  events: EventRepository;
  apps: ApplicationRepository;
  instances: InstanceRepository;
  visibility: EventVisibility;
  masterKey: Buffer;
  /** WEBHOOK_ALLOW_PRIVATE: deliver to private and loopback addresses too (tests). */
  allowPrivate: boolean;
  clock: () => Date;
}

type DeliveryJob = Job<{ instanceId: string; webhookId: string }>;

export function webhookDeliveryProcessor(deps: WebhookDeliveryDeps) {
  return async (job: DeliveryJob): Promise<void> => {
    const { instanceId, webhookId } = job.data;
    const webhook = await deps.webhooks.find(instanceId, webhookId);
    if (!webhook || webhook.state === 'failed') return;
    const [app, instance] = await Promise.all([deps.apps.find(instanceId, webhook.appId), deps.instances.findById(instanceId)]);
    if (!instance) return;
    // A disabled app is told nothing: what happens meanwhile is passed over, not kept for later.
    const viewer = app?.enabled && app.userId ? { owner: false as const, userId: app.userId } : undefined;
    const privateKey = openPrivateKey(instance.privateKeyEnc, deps.masterKey);
    let cursor = webhook.deliveredSeq;
    for (;;) {
      const page = await deps.events.after(instanceId, cursor, PAGE);
      if (page.length === 0) return;
      const visible = viewer
        ? new Set(await deps.visibility.visible(instanceId, viewer, page, { types: webhook.events, namespaces: webhook.namespaces }))
        : new Set<StoredEvent>();
      for (const event of page) {
        if (!visible.has(event)) continue;
        const body = JSON.stringify(publicEvent(event));
        try {
          await post(
            webhook.url,
            body,
            {
              'Content-Type': 'application/json',
              'Idempotency-Key': `${instanceId}:${event.seq}`,
              [SIGNATURE_HEADER]: signBody(body, privateKey, instance.keyId, instance.address),
            },
            deps.allowPrivate,
          );
        } catch (error) {
          const since = webhook.failingSince ?? deps.clock();
          const givingUp = deps.clock().getTime() - since.getTime() >= GIVE_UP_AFTER_MS;
          await deps.webhooks.failing(instanceId, webhookId, givingUp ? 'failed' : 'retrying', (error as Error).message, since);
          if (givingUp) return;
          throw error;
        }
        if (!(await deps.webhooks.advance(instanceId, webhookId, cursor, event.seq))) return;
        cursor = event.seq;
      }
      // Past the events passed over at the end of the page.
      const last = page[page.length - 1]!.seq;
      if (last > cursor && !(await deps.webhooks.advance(instanceId, webhookId, cursor, last))) return;
      cursor = last;
    }
  };
}

/** Waits between tries: 1 s, 2 s, 4 s … up to `maxMs`. */
export function webhookBackoff(maxMs: number) {
  return (attemptsMade: number): number => Math.min(1000 * 2 ** Math.max(0, attemptsMade - 1), maxMs);
}

/**
 * Every `everyMs`, numbers the events written since the last scan of the instances that have
 * subscriptions (the numbering step, packages/db/src/events.ts; events of other instances need no number
 * until something listens to them) and queues the subscriptions that are behind; returns what stops it.
 */
export function scanWebhooks(
  webhooks: WebhookRepository,
  events: EventRepository,
  producer: Producer<'webhook-delivery'>,
  logger: Logger,
  everyMs = 500,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    void (async () => {
      await events.numberPending(await webhooks.subscribedInstances());
      for (const due of await webhooks.due(1000)) {
        await producer.enqueue({ instanceId: due.instanceId, webhookId: due.id }, `webhook-${due.instanceId}-${due.id}`);
      }
    })()
      .catch((error: unknown) => logger.warn({ err: error }, 'webhook scan failed; the next one tries again'))
      .finally(() => {
        running = false;
      });
  }, everyMs);
  return () => clearInterval(timer);
}

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6');

/** Whether an address is private, loopback, link-local or otherwise not on the public internet. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isPrivateAddress(mapped);
  return PRIVATE.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/**
 * POSTs to the address the name resolves to now, checked first, with the name as Host (and TLS server
 * name): a name that resolves to a public address when checked cannot be made to reach a private one
 * when connected.
 */
async function post(url: string, body: string, headers: Record<string, string>, allowPrivate: boolean): Promise<void> {
  const target = new URL(url);
  const name = target.hostname.replace(/^\[|\]$/g, '');
  const address = isIP(name) ? name : (await lookup(name)).address;
  if (!allowPrivate && isPrivateAddress(address)) throw new Error(`${target.host} resolves to a private address; not delivered`);
  const direct = new URL(url);
  direct.hostname = isIP(address) === 6 ? `[${address}]` : address;
  const res = await httpRequest(direct, { method: 'POST', headers, body, timeoutMs: TIMEOUT_MS, maxBytes: 64 * 1024, host: target.host });
  if (res.status < 200 || res.status >= 300) throw new Error(`the receiver answered ${res.status}`);
}

export interface WebhookSettings {
  masterKey: Buffer;
  allowPrivate: boolean;
  maxBackoffMs: number;
}

/** The webhook worker, its producer and the scan, over one database (worker.ts; the tests run it in-process). */
export function webhookDelivery(db: GatewayDb, queue: QueueOptions, settings: WebhookSettings, logger: Logger) {
  const webhooks = new WebhookRepository(db);
  const events = new EventRepository(db);
  const processor = webhookDeliveryProcessor({
    webhooks,
    events,
    apps: new ApplicationRepository(db),
    instances: new InstanceRepository(db),
    visibility: new EventVisibility(db, new DataGrantRepository(db)),
    masterKey: settings.masterKey,
    allowPrivate: settings.allowPrivate,
    clock: () => new Date(),
  });
  // Retries end 24 h after the first failure (the processor decides), not after a number of them.
  const producer = new Producer(QUEUE_NAMES.webhookDelivery, {
    ...queue,
    jobOptions: { attempts: 1_000_000, backoff: { type: 'custom' }, removeOnComplete: true, removeOnFail: { age: 7 * 24 * 3600 } },
  });
  const worker = runQueue(QUEUE_NAMES.webhookDelivery, processor, queue, logger, 5, webhookBackoff(settings.maxBackoffMs));
  return { worker, producer, scan: () => scanWebhooks(webhooks, events, producer, logger) };
}
