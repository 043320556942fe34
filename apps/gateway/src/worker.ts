// Runs the gateway's jobs (dex registration, upload sweep, thumbnails, mail, purge of closed instances,
// exports and imports, webhook deliveries, the activity sweep) until `close()`. It holds the gateway
// database and blob store only: dex's database and key belong to dex's worker.
import { instanceUrl, type GatewayWorkerConfig } from '@pds/config';
import {
  createGatewayDb,
  databaseChecks,
  disconnectOnFailure,
  EventRepository,
  FileRepository,
  FileUploadRepository,
  GatewayDexStateRepository,
  InstanceErasureRepository,
  PasswordResetRepository,
  PortabilityRepository,
  poolUse,
  UserRepository,
  ReadRouting,
} from '@pds/db';
import { createLogger, once, requireReady, startMetrics, type Stoppable } from '@pds/runtime';
import {
  announcePresence,
  blockingRedis,
  GATEWAY_QUEUES,
  redisTarget,
  dexRegistrationProducer,
  jobIds,
  Producer,
  QUEUE_NAMES,
  reconcileEvery,
  runQueue,
  scheduleInstancePurge,
  scheduleActivitySweep,
  scheduleExportSweep,
  scheduleUploadSweep,
  startJobProcess,
} from '@pds/queue';
import { createBlobStore, LocalBlobStore, objectKey, removeOrphans, S3BlobStore, type BlobStore } from '@pds/storage';
import { settleUnfinished } from './files/trash-moves';
import { Invalidation } from './instances/invalidation';
import { SharedRecentWrites } from './instances/recent-writes';
import { dexRegistrationProcessor } from './jobs/dex-registration';
import { instancePurgeProcessor } from './jobs/instance-purge';
import { exportArchiveProcessor } from './jobs/export-archive';
import { exportSweepProcessor } from './jobs/export-sweep';
import { importArchiveProcessor } from './jobs/import-archive';
import { mailProcessor } from './jobs/mail';
import { requeuePendingRegistrations } from './jobs/reconcile';
import { thumbnailProcessor } from './jobs/thumbnail';
import { trashPurgeProcessor } from './jobs/trash-purge';
import { ACTIVITY_SWEEP_EVERY_MS, activitySweepProcessor } from './jobs/activity-sweep';
import { uploadSweepProcessor } from './jobs/upload-sweep';
import { webhookDelivery } from './jobs/webhook-delivery';
import { mailFrom, smtpSender } from './mail/smtp';

/** How often abandoned uploads are looked for (they are removed once older than UPLOAD_DEADLINE). */
export const UPLOAD_SWEEP_EVERY_MS = 5 * 60 * 1000;
/** How often closing instances past their grace period are looked for (the grace is counted in days). */
export const INSTANCE_PURGE_EVERY_MS = 10 * 60 * 1000;

/** The sweep, then the trash's purge, as one job run. */
function withTrashPurge<R extends object>(sweep: () => Promise<R>, purge: () => Promise<{ purged: number }>) {
  return async () => ({ ...(await sweep()), ...(await purge()) });
}

export async function startGatewayWorker(config: GatewayWorkerConfig): Promise<Stoppable> {
  const store = await createBlobStore(config);
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'gateway-worker' });
  const db = createGatewayDb(config.DATABASE_URL, { max: 3, replicaUrl: config.DATABASE_REPLICA_URL });
  await disconnectOnFailure(db, requireReady('gateway worker', databaseChecks('gateway', db)));
  // BullMQ workers block on Redis: maxRetriesPerRequest must be null.
  const redis = blockingRedis(redisTarget(config));
  const queue = { connection: redis, prefix: config.QUEUE_PREFIX };
  const states = new GatewayDexStateRepository(db);
  const files = new FileRepository(db);
  const uploads = new FileUploadRepository(db);
  const clock = () => new Date();
  const sender = config.SMTP_URL ? smtpSender(config.SMTP_URL, mailFrom(config)) : undefined;
  if (!sender) logger.warn('SMTP_URL is not set: mail jobs (password resets) fail until it is');
  const invalidation = new Invalidation(redis, undefined, `${config.QUEUE_PREFIX}:invalidate`, logger);
  // Exports read the replica when there is one, except right after the instance's own writes (marked in Redis by the gateways).
  const windowMs = config.DATABASE_REPLICA_WINDOW * 1000;
  const reads = new ReadRouting(db, db.replica && new SharedRecentWrites(redis, `${config.QUEUE_PREFIX}:replica`, windowMs, logger));
  const portability = new PortabilityRepository(db, reads);
  const ttlHours = config.EXPORT_TTL_HOURS;
  const maxFileBytes = config.MAX_UPLOAD_BYTES;
  const thumbnails = new Producer(QUEUE_NAMES.thumbnail, queue);

  const webhooks = webhookDelivery(
    db,
    queue,
    { masterKey: config.MASTER_KEY, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE, maxBackoffMs: config.WEBHOOK_MAX_BACKOFF * 1000 },
    logger,
  );
  const workers = [
    runQueue(QUEUE_NAMES.dexRegistration, dexRegistrationProcessor({ dexUrl: config.DEX_URL, states }), queue, logger),
    runQueue(
      QUEUE_NAMES.uploadSweep,
      // The trash is purged on the sweep's schedule: both are the files' housekeeping.
      withTrashPurge(
        uploadSweepProcessor({
          files,
          uploads,
          store,
          objectKey,
          clock,
          uploadDeadline: config.UPLOAD_DEADLINE,
          leftovers: (cutoff) => removeLeftovers(store, files, uploads, clock, config.SIGNED_URL_TTL, cutoff),
        }),
        trashPurgeProcessor({ files, store, clock, trashDays: config.TRASH_DAYS }),
      ),
      queue,
      logger,
    ),
    // Two at a time: decoding an image takes a core for a moment.
    runQueue(QUEUE_NAMES.thumbnail, thumbnailProcessor({ files, store }), queue, logger, 2),
    webhooks.worker,
    runQueue(
      QUEUE_NAMES.mail,
      mailProcessor({
        sender,
        users: new UserRepository(db),
        resets: new PasswordResetRepository(db),
        clock,
        consoleUrl: (address) => instanceUrl(config, address),
      }),
      queue,
      logger,
    ),
    runQueue(
      QUEUE_NAMES.instancePurge,
      instancePurgeProcessor({
        erasure: new InstanceErasureRepository(db),
        store,
        dexUrl: config.DEX_URL,
        masterKey: config.MASTER_KEY,
        clock,
        // Publishes only: the worker caches no instance.
        announce: (message) => invalidation.publish(message),
        logger,
      }),
      queue,
      logger,
    ),
    // One at a time each: an export or import streams a whole instance, and two would only share the disk.
    runQueue(QUEUE_NAMES.exportArchive, exportArchiveProcessor({ repository: portability, store, clock, ttlHours }), queue, logger, 1),
    runQueue(
      QUEUE_NAMES.importArchive,
      importArchiveProcessor({
        repository: portability,
        store,
        clock,
        limits: { maxFileBytes, maxTotalBytes: 4 * config.IMPORT_MAX_BYTES },
        // Restored images ask for their thumbnails, as completed uploads do at the gateway.
        thumbnails,
      }),
      queue,
      logger,
      1,
    ),
    runQueue(QUEUE_NAMES.exportSweep, exportSweepProcessor({ repository: portability, store, clock, ttlHours }), queue, logger, 1),
    runQueue(
      QUEUE_NAMES.activitySweep,
      activitySweepProcessor(new EventRepository(db), config.ACTIVITY_RETENTION_DAYS, clock),
      queue,
      logger,
      1,
    ),
  ];
  const registration = dexRegistrationProducer(queue);
  // Producers of the queues: the registration requeue, restored images' thumbnails, and the depth metrics.
  const sweep = new Producer(QUEUE_NAMES.uploadSweep, queue);
  const mail = new Producer(QUEUE_NAMES.mail, queue);
  const purge = new Producer(QUEUE_NAMES.instancePurge, queue);

  const graceMs = config.SHUTDOWN_TIMEOUT * 1000;
  const close = await startJobProcess({
    name: 'gateway worker',
    logger,
    workers,
    producers: [registration, sweep, thumbnails, mail, purge, webhooks.producer],
    connection: redis,
    prefix: config.QUEUE_PREFIX,
    graceMs,
    begin: async () => {
      await scheduleUploadSweep(queue, UPLOAD_SWEEP_EVERY_MS);
      await scheduleInstancePurge(queue, INSTANCE_PURGE_EVERY_MS);
      // A purge killed mid-way (or due while no worker ran) resumes now, not at the next tick.
      await purge.enqueue({}, `${jobIds.instancePurge}-start`);
      // So do moves into the trash or out of it that a crash cut short (a deleted file's bytes still
      // reachable at an old address); a failure here leaves them to the next sweep.
      await settleUnfinished({ files, store }).catch((err: unknown) =>
        logger.error({ err }, 'finishing moves to and from the trash failed'),
      );
      await scheduleExportSweep(queue, UPLOAD_SWEEP_EVERY_MS);
      await scheduleActivitySweep(queue, ACTIVITY_SWEEP_EVERY_MS);
      await requeuePendingRegistrations(states, registration, logger);
      const metrics = await startMetrics('gateway-worker', config);
      // Every queue's depth, this worker's or not yet produced by it (webhooks, exports, sweeps too).
      const depth = GATEWAY_QUEUES.map((name) => new Producer(name, queue));
      metrics?.metrics.queues(depth.map((producer) => producer.queue));
      metrics?.metrics.pool(() => poolUse(db));
      const stopReconciling = reconcileEvery(() => requeuePendingRegistrations(states, registration, logger), logger);
      const stopScanning = webhooks.scan();
      const leave = announcePresence(redis, config.QUEUE_PREFIX, { kind: 'gateway-worker', queues: [...GATEWAY_QUEUES] });
      return async () => {
        await leave();
        stopReconciling();
        stopScanning();
        await metrics?.close();
        await Promise.all(depth.map((producer) => producer.close()));
      };
    },
    release: async () => {
      sender?.close();
      await db.$disconnect();
    },
  });
  return { close: once(close), graceMs };
}

/**
 * The local store's partial temp files, and files of resumable uploads idle since `cutoff` that no row
 * records (a crash between the two); on S3, objects no live file points to, once older than a signed
 * address lives (an upload may still be landing until then), with a minute's margin for clock skew.
 */
async function removeLeftovers(
  store: BlobStore,
  files: FileRepository,
  uploads: FileUploadRepository,
  clock: () => Date,
  signedUrlTtl: number,
  cutoff: Date,
): Promise<number> {
  if (store instanceof LocalBlobStore) {
    const resumables = await store.removeAbandonedResumables((ids) => uploads.liveIds(ids), cutoff.getTime());
    return (await store.removeStaleTemp()) + resumables;
  }
  if (store instanceof S3BlobStore) {
    const olderThan = new Date(clock().getTime() - (signedUrlTtl + 60) * 1000);
    return removeOrphans(store, (keys) => files.liveFiles(keys), olderThan);
  }
  return 0;
}
