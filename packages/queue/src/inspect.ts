// The operator's view of a process's queues: how many jobs wait, run, wait to be retried and have failed;
// the failed jobs one by one (why, how often tried, what they carried); and a retry of one, or a job
// waiting out its backoff run now. Read-only but for those two, which are the operator's to ask for.
import { Queue, type Job } from 'bullmq';
import { bullPrefix, type QueueName, type QueueOptions } from './index';

export interface QueueSummary {
  name: string;
  waiting: number;
  active: number;
  /** Failed at least once, waiting out their backoff before the next attempt. */
  retrying: number;
  /** Delayed without a failure: a sweep's next run. */
  scheduled: number;
  failed: number;
}

export interface JobSummary {
  id: string;
  queue: string;
  state: string;
  attemptsMade: number;
  attempts: number;
  failedReason?: string;
  createdAt: string;
  finishedAt?: string;
}

export interface JobDetails extends JobSummary {
  /** What the job carries, as its queue's `show` lets the operator see it. */
  data: unknown;
  /** The stack of each failed attempt, newest last. */
  stacktrace: string[];
}

/** How many delayed jobs are read to tell retries from schedules; past it the split is a lower bound. */
const DELAYED_SCAN = 1000;

/** Of a job's payload, what the operator may see (by default all of it). */
export type ShowPayload = (queue: string, data: unknown) => unknown;

const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : undefined);

export class QueueInspector {
  private readonly queues = new Map<string, Queue>();

  constructor(
    names: readonly QueueName[],
    options: QueueOptions,
    private readonly show: ShowPayload = (_queue, data) => data,
  ) {
    for (const name of names) {
      const queue = new Queue(name, { connection: options.connection, prefix: bullPrefix(options) });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
  }

  get names(): string[] {
    return [...this.queues.keys()];
  }

  async summaries(): Promise<QueueSummary[]> {
    return Promise.all(
      [...this.queues.values()].map(async (queue) => {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
        const delayed = await queue.getDelayed(0, DELAYED_SCAN - 1);
        const retrying = delayed.filter((job) => job.attemptsMade > 0).length;
        return {
          name: queue.name,
          waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
          active: counts.active ?? 0,
          retrying,
          scheduled: (counts.delayed ?? 0) - retrying,
          failed: counts.failed ?? 0,
        };
      }),
    );
  }

  /** Failed jobs, newest first; null for a queue this process does not know. */
  async failed(name: string, skip: number, take: number): Promise<{ total: number; jobs: JobSummary[] } | null> {
    const queue = this.queues.get(name);
    if (!queue) return null;
    const [total, jobs] = await Promise.all([queue.getFailedCount(), queue.getFailed(skip, skip + take - 1)]);
    return { total, jobs: jobs.map((job) => summary(job as Job, 'failed')) };
  }

  async job(name: string, id: string): Promise<JobDetails | null> {
    const job = await this.find(name, id);
    if (!job) return null;
    return { ...summary(job, await job.getState()), data: this.show(name, job.data), stacktrace: job.stacktrace ?? [] };
  }

  /**
   * A failed job back to waiting, its attempts counted afresh; a job waiting out its backoff run now.
   * 'not-retryable' for a job in any other state (running, done, waiting already); null: no such job.
   */
  async retry(name: string, id: string): Promise<'retried' | 'not-retryable' | null> {
    const job = await this.find(name, id);
    if (!job) return null;
    const state = await job.getState();
    if (state === 'failed') await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    else if (state === 'delayed' && job.attemptsMade > 0) await job.promote();
    else return 'not-retryable';
    return 'retried';
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }

  private async find(name: string, id: string): Promise<Job | null> {
    const queue = this.queues.get(name);
    return ((await queue?.getJob(id)) as Job | undefined) ?? null;
  }
}

function summary(job: Job, state: string): JobSummary {
  return {
    id: job.id ?? '',
    queue: job.queueName,
    state,
    attemptsMade: job.attemptsMade,
    attempts: job.opts.attempts ?? 1,
    ...(job.failedReason ? { failedReason: job.failedReason } : {}),
    createdAt: iso(job.timestamp) ?? new Date(0).toISOString(),
    ...(job.finishedOn ? { finishedAt: iso(job.finishedOn) } : {}),
  };
}
