// The cluster's totals in Prometheus: instances by state, files, records and their bytes, read from the
// database at scrape time (the usage rows the writing statements keep: one sum, no recount). No label
// names an instance: a metric per instance would grow with the cluster and reveal its members.
import type { InstanceAdminRepository, InstanceUsage, UsageRepository } from '@pds/db';
import type { Metrics } from '@pds/runtime';

export function clusterTotals(metrics: Metrics, instances: InstanceAdminRepository, usage: UsageRepository): void {
  metrics.gauge(
    'pds_instances',
    'Instances of the cluster by state (active, suspended, closing)',
    ['state'],
    async () => Object.entries(await instances.countByState()).map(([state, n]) => [{ state }, n]),
    // Every gateway process reports the same cluster-wide figure: GATEWAY_WORKERS must not add them up.
    'max',
  );
  // Files and records from the usage rows; every gateway process reports the same figures: 'max', as above.
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
}
