// The cluster's totals in Prometheus: instances by state, read from the database at scrape time. No
// label names an instance: a metric per instance would grow with the cluster and reveal its members.
import type { InstanceAdminRepository } from '@pds/db';
import type { Metrics } from '@pds/runtime';

export function clusterTotals(metrics: Metrics, instances: InstanceAdminRepository): void {
  metrics.gauge(
    'pds_instances',
    'Instances of the cluster by state (active, suspended, closing)',
    ['state'],
    async () => Object.entries(await instances.countByState()).map(([state, n]) => [{ state }, n]),
    // Every gateway process reports the same cluster-wide figure: GATEWAY_WORKERS must not add them up.
    'max',
  );
}
