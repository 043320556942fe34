// A BullMQ worker for one queue, with the failure logging every domain worker wants.
import { Worker, type Job, type Processor } from 'bullmq';
import type { QueueName, QueueOptions } from './index';
import { errorMessage } from './retry';

/** The part of a pino logger a worker uses (so this package needs no logger of its own). */
export interface JobLogger {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export function runQueue(name: QueueName, processor: Processor, options: QueueOptions, logger: JobLogger, concurrency = 5): Worker {
  const worker = new Worker(name, processor, { connection: options.connection, prefix: options.prefix ?? 'pds', concurrency });
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
