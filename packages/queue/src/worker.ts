// A BullMQ worker for one queue, with the failure logging every domain worker wants.
import { Worker, type Job, type Processor } from 'bullmq';
import type { RedisClient } from './connections';
import { bullPrefix, WORKER_OPTIONS, type QueueName, type QueueOptions } from './index';
import { errorMessage } from './retry';

/** The part of a pino logger a worker uses (so this package needs no logger of its own). */
export interface JobLogger {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export function runQueue(
  name: QueueName,
  processor: Processor,
  options: QueueOptions,
  logger: JobLogger,
  concurrency = 5,
  /** How long to wait before a retry, for jobs whose backoff type is 'custom'. */
  backoffStrategy?: (attemptsMade: number) => number,
): Worker {
  const worker = new Worker(name, processor, {
    connection: options.connection,
    prefix: bullPrefix(options),
    concurrency,
    ...WORKER_OPTIONS,
    ...(backoffStrategy ? { settings: { backoffStrategy } } : {}),
  });
  worker.on('failed', (job: Job | undefined, error: Error) => {
    // Messages name addresses and statuses, never tokens.
    logger.warn({ queue: name, jobId: job?.id, attemptsMade: job?.attemptsMade, error: errorMessage(error) }, 'job failed');
  });
  worker.on('error', (error) => logger.error({ queue: name, error: errorMessage(error) }, 'worker error'));
  return worker;
}

/** True when `work` settled within `ms`; false when it was given up on (it may still settle later). */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = await Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    timedOut,
  ]);
  clearTimeout(timer);
  return settled;
}

/** How long a forced close may wait on Redis: a cluster connection caught mid-reconnect may never answer. */
const FORCED_CLOSE_MS = 2000;

/** Lets running jobs finish for up to `graceMs`, then stops the workers without waiting (those jobs run again later). */
export async function closeWorkers(workers: Worker[], graceMs: number): Promise<void> {
  if (await settlesWithin(Promise.all(workers.map((w) => w.close())), graceMs)) return;
  await settlesWithin(Promise.all(workers.map((w) => w.close(true))), FORCED_CLOSE_MS);
}

/** How often a worker queues again the work an outage or a crash may have dropped. */
export const RECONCILE_EVERY_MS = 10_000;

/**
 * Runs `task` every RECONCILE_EVERY_MS, never two at once, so work owed after an outage is picked up
 * within one period of recovery without a restart. A failing run is logged and retried next period.
 * Returns the function that stops it.
 */
export function reconcileEvery(task: () => Promise<unknown>, logger: JobLogger): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    task()
      .catch((error: unknown) => logger.warn({ error: errorMessage(error) }, 'reconciliation failed; retrying next period'))
      .finally(() => (running = false));
  }, RECONCILE_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

export interface JobProcess {
  /** For the start-up line: `<name> running`. */
  name: string;
  logger: JobLogger & { info(fields: object, message: string): void; flush(): void };
  workers: Worker[];
  /** The producers the process holds (requeueing, depth metrics); closed after the workers. */
  producers: Array<{ close(): Promise<void> }>;
  /** The workers' blocking connection; disconnected after the producers. */
  connection: RedisClient;
  prefix: string;
  /** SHUTDOWN_TIMEOUT in ms: how long running jobs may finish on close. */
  graceMs: number;
  /**
   * Runs once every worker is ready (schedules, a first reconciliation, the metrics server) and returns
   * what stops the work it started; that is stopped first on close.
   */
  begin(): Promise<() => Promise<void> | void>;
  /** Closes what the process opened besides (its database), after everything else. */
  release(): Promise<void>;
}

/**
 * Every job worker process's start and stop, in one order: wait for the workers, `begin`; on close stop
 * what `begin` started, let running jobs finish (bounded), close the producers, the connection, then
 * `release`. A start that fails closes what it opened before it rethrows. Returns the close (call it once).
 */
export async function startJobProcess(parts: JobProcess): Promise<() => Promise<void>> {
  let stopBegun: () => Promise<void> | void = () => undefined;
  const close = async () => {
    await stopBegun();
    await closeWorkers(parts.workers, parts.graceMs);
    // Bounded: after a Redis outage a cluster connection may never finish closing; disconnect() below cuts it.
    await settlesWithin(Promise.all(parts.producers.map((producer) => producer.close())), FORCED_CLOSE_MS);
    parts.connection.disconnect();
    await parts.release();
    parts.logger.flush();
  };
  try {
    await Promise.all(parts.workers.map((w) => w.waitUntilReady()));
    stopBegun = await parts.begin();
  } catch (error) {
    await close();
    throw error;
  }
  parts.logger.info({ queues: parts.workers.map((w) => w.name), prefix: parts.prefix }, `${parts.name} running`);
  return close;
}
