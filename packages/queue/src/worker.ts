// A BullMQ worker for one queue, with the failure logging every domain worker wants.
import { Worker, type Job, type Processor } from 'bullmq';
import { WORKER_OPTIONS, type QueueName, type QueueOptions } from './index';
import { errorMessage } from './retry';

/** The part of a pino logger a worker uses (so this package needs no logger of its own). */
export interface JobLogger {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export function runQueue(name: QueueName, processor: Processor, options: QueueOptions, logger: JobLogger, concurrency = 5): Worker {
  const worker = new Worker(name, processor, {
    connection: options.connection,
    prefix: options.prefix ?? 'pds',
    concurrency,
    ...WORKER_OPTIONS,
  });
  worker.on('failed', (job: Job | undefined, error: Error) => {
    // Messages name addresses and statuses, never tokens.
    logger.warn({ queue: name, jobId: job?.id, attemptsMade: job?.attemptsMade, error: errorMessage(error) }, 'job failed');
  });
  worker.on('error', (error) => logger.error({ queue: name, error: errorMessage(error) }, 'worker error'));
  return worker;
}

/** Lets running jobs finish for up to `graceMs`, then stops the workers without waiting (those jobs run again later). */
export async function closeWorkers(workers: Worker[], graceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const graceful = Promise.all(workers.map((w) => w.close())).then(() => true);
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), graceMs);
  });
  const finished = await Promise.race([graceful, timedOut]);
  clearTimeout(timer);
  if (!finished) await Promise.all(workers.map((w) => w.close(true)));
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
