// The cluster's totals in Prometheus: instances by state, files, records and their bytes, webhooks by
// delivery state, instances near a quota, the database's size and a replica's lag, read from the
// database at scrape time (the usage rows the writing statements keep: one sum, no recount). No label
// names an instance: a metric per instance would grow with the cluster and reveal its members.
import type { GatewayDb, InstanceAdminRepository, InstanceUsage, QuotaDefaults, UsageRepository } from '@pds/db';
import { statfs } from 'node:fs/promises';
import type { Metrics } from '@pds/runtime';

/** The share of a quota past which an instance counts as near it (the quota-pressure alert). */
export const NEAR_QUOTA = 0.9;

export function clusterTotals(
  metrics: Metrics,
  instances: InstanceAdminRepository,
  usage: UsageRepository,
  quotas: QuotaDefaults,
  db: GatewayDb,
  /** DATA_DIR when files are kept on local disk (STORAGE=local): its filesystem's room is watched. */
  localStoreDir?: string,
): void {
  // Every gateway process reports the same cluster-wide figures: GATEWAY_WORKERS must not add them up ('max').
  metrics.gauge(
    'pds_instances',
    'Instances of the cluster by state (active, suspended, closing)',
    ['state'],
    async () => Object.entries(await instances.countByState()).map(([state, n]) => [{ state }, n]),
    'max',
  );
  // Files and records from the usage rows.
  const stored = (name: string, help: string, files: keyof InstanceUsage, records: keyof InstanceUsage) =>
    metrics.gauge(
      name,
      help,
      ['kind'],
      async () => {
        const totals = await usage.totals();
        return [
          [{ kind: 'files' }, totals[files]],
          [{ kind: 'records' }, totals[records]],
        ];
      },
      'max',
    );
  stored('pds_stored_items', 'Completed and trashed files, and data records, of the whole cluster', 'files', 'records');
  stored(
    'pds_stored_bytes',
    'Bytes of files (completed and trashed) and of data records, of the whole cluster',
    'fileBytes',
    'recordBytes',
  );
  metrics.gauge(
    'pds_webhooks',
    "Apps' webhooks by delivery state: ok, retrying (failing, backing off) or failed (given up)",
    ['state'],
    async () => Object.entries(await instances.webhooksByState()).map(([state, n]) => [{ state }, n]),
    'max',
  );
  metrics.gauge(
    'pds_instances_near_quota',
    `Instances using at least ${NEAR_QUOTA * 100} % of their file (kind=files) or record (kind=records) quota`,
    ['kind'],
    async () => {
      const near = await instances.nearQuota(NEAR_QUOTA, quotas);
      return [
        [{ kind: 'files' }, near.files],
        [{ kind: 'records' }, near.records],
      ];
    },
    'max',
  );
  metrics.gauge(
    'pds_database_bytes',
    "The gateway database's size on disk",
    [],
    async () => [[{}, await instances.databaseBytes()]],
    'max',
  );
  if (localStoreDir)
    metrics.gauge(
      'pds_local_store_bytes',
      'The filesystem holding the local file store (DATA_DIR): its size and the bytes still free (state=size|free)',
      ['state'],
      async () => {
        const fs = await statfs(localStoreDir);
        return [
          [{ state: 'size' }, fs.blocks * fs.bsize],
          [{ state: 'free' }, fs.bavail * fs.bsize],
        ];
      },
      'max',
    );
  const replica = db.replica;
  if (replica)
    metrics.gauge(
      'db_replica_lag_seconds',
      'How far the streaming replica (DATABASE_REPLICA_URL) is behind: now minus the last replayed transaction (0 when idle)',
      [],
      async () => {
        const { rows } = await replica.query<{ lag: number | null }>(
          `SELECT CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
             ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) END::float8 AS "lag"`,
        );
        return [[{}, rows[0]?.lag ?? 0]];
      },
      'max',
    );
}
