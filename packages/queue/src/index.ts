// Queue names, typed job payloads and producers, shared by the apps that enqueue and their workers.
import type { EventEmitter } from 'node:events';
import { Job, Queue, QueueEvents, type JobsOptions } from 'bullmq';
import type { AppRecord } from '@pds/app-record';
import { backBefore, queueKeyPrefix, REQUEST_BUDGET_MS, type RedisClient } from './connections';

export const QUEUE_NAMES = {
  dexRegistration: 'dex-registration',
  keyFetch: 'dex-key-fetch',
  appPush: 'app-push',
  uploadSweep: 'upload-sweep',
  thumbnail: 'thumbnail',
  mail: 'mail',
  webhookDelivery: 'webhook-delivery',
  instancePurge: 'instance-purge',
  exportArchive: 'export-archive',
  importArchive: 'import-archive',
  exportSweep: 'export-sweep',
  activitySweep: 'activity-sweep',
} as const;

/** The queues the gateway worker takes jobs from (the operator's console shows them). */
export const GATEWAY_QUEUES = [
  QUEUE_NAMES.dexRegistration,
  QUEUE_NAMES.uploadSweep,
  QUEUE_NAMES.thumbnail,
  QUEUE_NAMES.mail,
  QUEUE_NAMES.webhookDelivery,
  QUEUE_NAMES.instancePurge,
  QUEUE_NAMES.exportArchive,
  QUEUE_NAMES.importArchive,
  QUEUE_NAMES.exportSweep,
  QUEUE_NAMES.activitySweep,
] as const;

/** The queues the dex worker takes jobs from. */
export const DEX_QUEUES = [QUEUE_NAMES.keyFetch, QUEUE_NAMES.appPush] as const;

/** A message the gateway worker sends as it is (to, subject, text and HTML bodies from a template). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * The mail queue's jobs: a ready message, or a password-reset request, which the worker turns into a
 * link and a mail only when the address is the owner's (so the request itself costs the same either way).
 */
export type MailJob =
  { kind: 'message'; message: MailMessage } | { kind: 'password-reset'; instanceId: string; address: string; email: string };

export interface JobPayloads {
  /** Gateway → dex: register a newly created instance. */
  [QUEUE_NAMES.dexRegistration]: { address: string };
  /** Dex: fetch and store the public key of a registering instance. */
  [QUEUE_NAMES.keyFetch]: { address: string };
  /** Dex → instance: deliver one certified app record. */
  [QUEUE_NAMES.appPush]: { pushId: string; address: string; record: AppRecord; version: number };
  /** Gateway worker: remove uploads never completed before the deadline. */
  [QUEUE_NAMES.uploadSweep]: Record<string, never>;
  /** Gateway worker: make the thumbnail of a file that was just completed. */
  [QUEUE_NAMES.thumbnail]: { instanceId: string; address: string; fileId: string };
  /** Gateway worker: send a mail, or make a password-reset link and mail it. */
  [QUEUE_NAMES.mail]: MailJob;
  /** Gateway worker: deliver a webhook's owed events, in order (one job per subscription at a time). */
  [QUEUE_NAMES.webhookDelivery]: { instanceId: string; webhookId: string };
  /** Gateway worker: erase the closing instances whose grace period has ended. */
  [QUEUE_NAMES.instancePurge]: Record<string, never>;
  /** Gateway worker: write the archive of a whole instance (one PortabilityJob row). */
  [QUEUE_NAMES.exportArchive]: { instanceId: string; address: string; id: string };
  /** Gateway worker: verify an uploaded archive and restore it into its (empty) instance. */
  [QUEUE_NAMES.importArchive]: { instanceId: string; address: string; id: string };
  /** Gateway worker: remove expired export archives and old import uploads. */
  [QUEUE_NAMES.exportSweep]: Record<string, never>;
  /** Gateway worker: remove activity log entries and outbox events past ACTIVITY_RETENTION_DAYS. */
  [QUEUE_NAMES.activitySweep]: Record<string, never>;
}

export type QueueName = keyof JobPayloads;

/** Redis could not take the job in time; callers answer 503 (with Retry-After) or leave the work to reconciliation. */
export class QueueUnavailableError extends Error {
  override readonly name = 'QueueUnavailableError';
}

/** What says the connection was lost under a command (it was not answered, and may not have been sent). */
const CONNECTION_LOST = /Stream isn't writeable|Connection is closed|ECONNRESET|EPIPE|Cluster isn't ready/;

/**
 * Runs `attempt` within REQUEST_BUDGET_MS; a slow answer is waited for, not refused. An attempt that
 * loses the connection is tried again, within the same budget, once the connection is back (Redis
 * restarted, a cluster node failed over), when `retry` says a second attempt does no harm (a job with
 * an id joins itself). A Redis that refuses the reconnection is down: refused at once.
 */
async function withinBudget<T>(connection: RedisClient, attempt: () => Promise<T>, retry: boolean): Promise<T> {
  const deadline = Date.now() + REQUEST_BUDGET_MS;
  for (;;) {
    const work = attempt();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new QueueUnavailableError('the job queue did not answer in time')),
        Math.max(0, deadline - Date.now()),
      );
    });
    try {
      return await Promise.race([work, timeout]);
    } catch (error) {
      // The abandoned attempt may still fail later; that failure has no one left to tell.
      work.catch(() => undefined);
      if (error instanceof QueueUnavailableError) throw error;
      const lost = CONNECTION_LOST.test((error as Error).message);
      if (!(retry && lost && (await backBefore(connection, deadline)))) {
        throw new QueueUnavailableError(`the job queue refused the job: ${(error as Error).message}`);
      }
    } finally {
      clearTimeout(timer);
    }
  }
}
export type { Job, QueueEvents };

/** Retries with exponential backoff; finished jobs are trimmed so Redis does not grow. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 24 * 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/**
 * Every worker's options. A job whose worker died (kill -9, a lost node) is noticed when its lock
 * expires: a 5 s lock (renewed every 2.5 s while the job runs, so only a dead worker or an event loop
 * blocked for 2.5 s loses it) checked every second is picked up again within 6 s of the death, inside
 * the 10 s the operator is promised with room for a loaded machine; BullMQ's default is up to 60 s.
 */
export const WORKER_OPTIONS = { lockDuration: 5000, stalledInterval: 1000, maxStalledCount: 2 } as const;

export interface QueueOptions {
  connection: RedisClient;
  /** Key prefix in Redis; lets tests and clusters share one Redis. */
  prefix?: string;
  /** The queue's own retry policy, in place of DEFAULT_JOB_OPTIONS (producers only). */
  jobOptions?: JobsOptions;
}

/** BullMQ's prefix for these options (hash-tagged on a Redis Cluster, see queueKeyPrefix). */
export function bullPrefix(options: QueueOptions): string {
  return queueKeyPrefix(options.connection, options.prefix ?? 'pds');
}

export class Producer<N extends QueueName> {
  readonly queue: Queue;
  private readonly connection: RedisClient;

  constructor(
    readonly name: N,
    options: QueueOptions,
  ) {
    this.connection = options.connection;
    this.queue = new Queue(name, {
      connection: options.connection,
      prefix: bullPrefix(options),
      defaultJobOptions: options.jobOptions ?? DEFAULT_JOB_OPTIONS,
    });
    // Without a listener BullMQ prints every connection error with its stack (console.error). Each
    // failure already reaches a caller: an enqueue fails (QueueUnavailableError), a schedule call rejects.
    this.queue.on('error', () => undefined);
  }

  /**
   * Queues a job that needs no de-duplication. For one job per subject use `enqueue`. Tried once: a
   * second attempt after a lost connection could queue it twice.
   */
  async add(payload: JobPayloads[N], options?: JobsOptions): Promise<void> {
    await withinBudget(this.connection, () => this.queue.add(this.name, payload, options), options?.jobId !== undefined);
  }

  /**
   * Queues the job, or joins the one with this id that is still waiting or running. A finished job
   * (kept a while for inspection) would make `add` a silent no-op, so it is replaced: a new request
   * must really run again.
   */
  enqueue(payload: JobPayloads[N], jobId: string): Promise<Job<JobPayloads[N]>> {
    return withinBudget(this.connection, () => this.replaceFinishedAndAdd(payload, jobId), true);
  }

  private async replaceFinishedAndAdd(payload: JobPayloads[N], jobId: string): Promise<Job<JobPayloads[N]>> {
    const existing = (await this.queue.getJob(jobId)) as Job<JobPayloads[N]> | undefined;
    const state = existing && (await existing.getState());
    if (existing && (state === 'completed' || state === 'failed')) {
      // Another caller may have replaced it at the same moment; then add() below joins theirs.
      await existing.remove().catch(() => undefined);
    }
    return (await this.queue.add(this.name, payload, { jobId })) as Job<JobPayloads[N]>;
  }

  /**
   * What `job` returned, once it completes within `ms`; rejects when it failed, when `ms` ran out, and
   * when Redis fails meanwhile. BullMQ's own Job.waitUntilFinished checks the job from inside a
   * promise's async executor: when Redis fails under that check, the rejection reaches no one (an
   * unhandled rejection, which ends a node process) and the wait hangs until its timeout.
   */
  outcome(job: Job<JobPayloads[N]>, events: QueueEvents, ms: number): Promise<unknown> {
    const completed = `completed:${job.id}`;
    const failed = `failed:${job.id}`;
    // QueueEvents also emits each job's events under its id, which its types do not name.
    const emitter = events as unknown as EventEmitter;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error(`job ${job.id} did not finish within ${ms} ms`)), ms);
      const finish = () => {
        clearTimeout(timer);
        emitter.off(completed, onCompleted).off(failed, onFailed);
      };
      const succeed = (value: unknown) => {
        finish();
        resolve(value);
      };
      const fail = (error: Error) => {
        finish();
        reject(error);
      };
      const onCompleted = ({ returnvalue }: { returnvalue: unknown }) => succeed(returnvalue);
      const onFailed = ({ failedReason }: { failedReason: string }) => fail(new Error(failedReason));
      emitter.on(completed, onCompleted).on(failed, onFailed);
      // The job may have finished before the listeners were there: once the events are read, ask. The
      // state first, then the job: a job read first may finish before its state is asked, and its
      // outcome would be read from the copy taken before (an empty reason, no value). BullMQ writes a
      // job's outcome with its move to completed or failed, so once the state says so the job holds it.
      void (async () => {
        await events.waitUntilReady();
        const state = await this.queue.getJobState(job.id!);
        if (state !== 'completed' && state !== 'failed') return;
        const now = await Job.fromId<JobPayloads[N], unknown>(this.queue, job.id!);
        if (now === undefined) return;
        if (state === 'completed') succeed(now.returnvalue);
        else fail(new Error(now.failedReason));
      })().catch(fail);
    });
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

/** Producer used by the gateway after sign-up. */
export function dexRegistrationProducer(options: QueueOptions): Producer<typeof QUEUE_NAMES.dexRegistration> {
  return new Producer(QUEUE_NAMES.dexRegistration, options);
}

/**
 * Completion events of one queue, for callers that wait on a job (dex's registerHat). BullMQ opens a
 * blocking connection of its own (a duplicate of `connection`, which should have
 * maxRetriesPerRequest: null); `close()` it.
 */
export function queueEvents(name: QueueName, options: QueueOptions): QueueEvents {
  return new QueueEvents(name, { connection: options.connection, prefix: bullPrefix(options) });
}

/** Producer used by the gateway when a file completes. */
export function thumbnailProducer(options: QueueOptions): Producer<typeof QUEUE_NAMES.thumbnail> {
  return new Producer(QUEUE_NAMES.thumbnail, options);
}

/**
 * Producer of the mail queue (gateway: password resets; any feature: a message). Its jobs carry
 * addresses and links, so they leave Redis as soon as they are done, and failed ones after a day.
 */
export function mailProducer(options: QueueOptions): Producer<typeof QUEUE_NAMES.mail> {
  return new Producer(QUEUE_NAMES.mail, options);
}

export const MAIL_JOB_OPTIONS: JobsOptions = { removeOnComplete: true, removeOnFail: { age: 24 * 3600 } };

/** Producers used by the gateway when an export starts or an import's archive is uploaded. */
export function portabilityProducers(options: QueueOptions) {
  return {
    exports: new Producer(QUEUE_NAMES.exportArchive, options),
    imports: new Producer(QUEUE_NAMES.importArchive, options),
  };
}

/** Producer used by dex on registerHat. */
export function keyFetchProducer(options: QueueOptions): Producer<typeof QUEUE_NAMES.keyFetch> {
  return new Producer(QUEUE_NAMES.keyFetch, options);
}

/** Producer used by dex on update-application, one job per target instance. */
export function appPushProducer(options: QueueOptions): Producer<typeof QUEUE_NAMES.appPush> {
  return new Producer(QUEUE_NAMES.appPush, options);
}

/**
 * Registers the repeatable upload sweep. The scheduler id is fixed, so every worker start (and every
 * worker replica) updates the one schedule instead of adding another.
 */
export function scheduleUploadSweep(options: QueueOptions, everyMs: number): Promise<void> {
  return scheduleSweep(QUEUE_NAMES.uploadSweep, jobIds.uploadSweep, options, everyMs);
}

/** Registers the repeatable purge of closed instances past their grace period, as the upload sweep's. */
export function scheduleInstancePurge(options: QueueOptions, everyMs: number): Promise<void> {
  return scheduleSweep(QUEUE_NAMES.instancePurge, jobIds.instancePurge, options, everyMs);
}

/** Registers the repeatable sweep of expired exports and stale imports (one schedule, as the upload sweep). */
export function scheduleExportSweep(options: QueueOptions, everyMs: number): Promise<void> {
  return scheduleSweep(QUEUE_NAMES.exportSweep, jobIds.exportSweep, options, everyMs);
}

/** Registers the repeatable retention sweep of the activity log (one schedule, as the upload sweep). */
export function scheduleActivitySweep(options: QueueOptions, everyMs: number): Promise<void> {
  return scheduleSweep(QUEUE_NAMES.activitySweep, jobIds.activitySweep, options, everyMs);
}

type SweepName = 'upload-sweep' | 'instance-purge' | 'export-sweep' | 'activity-sweep';

async function scheduleSweep(name: SweepName, schedulerId: string, options: QueueOptions, everyMs: number) {
  const producer = new Producer(name, options);
  try {
    await producer.queue.upsertJobScheduler(schedulerId, { every: everyMs }, { name, data: {} });
  } finally {
    await producer.close();
  }
}

/** Job ids (no ":" allowed by BullMQ): one per purpose and subject, so duplicates collapse. */
export const jobIds = {
  registration: (address: string) => `register-${address}`,
  keyFetch: (address: string) => `key-${address}`,
  appPush: (pushId: string) => `push-${pushId}`,
  uploadSweep: 'upload-sweep',
  instancePurge: 'instance-purge',
  // A file id is [a-z0-9_.-]; the instance id a uuid.
  thumbnail: (instanceId: string, fileId: string) => `thumbnail-${instanceId}-${fileId}`,
  // The PortabilityJob id is a uuid.
  exportArchive: (id: string) => `export-${id}`,
  importArchive: (id: string) => `import-${id}`,
  exportSweep: 'export-sweep',
  activitySweep: 'activity-sweep',
};
export { errorMessage, isLastAttempt } from './retry';
export { closeWorkers, reconcileEvery, RECONCILE_EVERY_MS, runQueue, startJobProcess, type JobLogger, type JobProcess } from './worker';
export * from './connections';
export * from './presence';
export * from './inspect';
