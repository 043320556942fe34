// Waiting on a job's outcome (dex's registerHat waits a few seconds for its key fetch): the value once
// it completes, whether before or during the wait; its reason when it failed; and when Redis dies under
// the wait, a rejection the waiter gets. BullMQ's Job.waitUntilFinished left that last one unhandled,
// which fails this test as it would end a node process.
import { randomBytes } from 'node:crypto';
import type { Worker } from 'bullmq';
import {
  blockingRedis,
  endConnection,
  keyFetchProducer,
  QUEUE_NAMES,
  queueEvents,
  requestRedis,
  runQueue,
  type QueueEvents,
  type RedisClient,
} from '@pds/queue';
import { eventually } from './support/eventually';
import { PrivateRedis } from './support/private-services';

jest.setTimeout(60_000);

const silent = { warn: () => undefined, error: () => undefined };

let redis: PrivateRedis;
let producer: ReturnType<typeof keyFetchProducer>;
let events: QueueEvents;
let worker: Worker | undefined;
let connections: RedisClient[] = [];

beforeAll(async () => {
  redis = await PrivateRedis.start();
  const prefix = `outcome-${randomBytes(4).toString('hex')}`;
  connections = [requestRedis({ url: redis.url }), blockingRedis({ url: redis.url }), blockingRedis({ url: redis.url })];
  const [request, blocking, forWorker] = connections as [RedisClient, RedisClient, RedisClient];
  producer = keyFetchProducer({ connection: request, prefix, jobOptions: { attempts: 1 } });
  events = queueEvents(QUEUE_NAMES.keyFetch, { connection: blocking, prefix });
  await events.waitUntilReady();
  // The processor answers by address: 'slow' after 300 ms, 'broken' with a failure, anything else at once.
  worker = runQueue(
    QUEUE_NAMES.keyFetch,
    async (job) => {
      const { address } = job.data as { address: string };
      if (address === 'broken') throw new Error('no key there');
      if (address === 'slow') await new Promise((resolve) => setTimeout(resolve, 300));
      return `fetched ${address}`;
    },
    { connection: forWorker, prefix },
    silent,
  );
});

afterAll(async () => {
  // Back up, and reconnected, so that everything closes as it would (BullMQ's duplicate connections too).
  await redis?.resume();
  await eventually(async () => connections.every((connection) => connection.status === 'ready'), 10_000);
  await worker?.close();
  await events?.close();
  await producer?.close();
  for (const connection of connections) await endConnection(connection);
  await redis?.stop();
});

it('is the value of a job that completes during the wait', async () => {
  const job = await producer.enqueue({ address: 'slow' }, 'slow');
  await expect(producer.outcome(job, events, 10_000)).resolves.toBe('fetched slow');
});

it('is the value of a job that had completed before the wait began', async () => {
  const job = await producer.enqueue({ address: 'quick' }, 'quick');
  await new Promise((resolve) => setTimeout(resolve, 500));
  await expect(producer.outcome(job, events, 10_000)).resolves.toBe('fetched quick');
});

it("is the failure's reason for a job that failed", async () => {
  const job = await producer.enqueue({ address: 'broken' }, 'broken');
  await expect(producer.outcome(job, events, 10_000)).rejects.toThrow('no key there');
});

it('rejects when the wait runs out, and when Redis dies under it, with nothing left unhandled', async () => {
  await worker!.close();
  worker = undefined;
  const job = await producer.enqueue({ address: 'never' }, 'never');
  await expect(producer.outcome(job, events, 300)).rejects.toThrow('did not finish within 300 ms');
  await redis.stop();
  await expect(producer.outcome(job, events, 3000)).rejects.toThrow();
  // An unhandled rejection would fail the test (jest reports it as an uncaught error) once it surfaces.
  await new Promise((resolve) => setTimeout(resolve, 500));
});
