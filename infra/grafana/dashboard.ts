// The cluster's Grafana dashboard, typed by Grafana's own dashboard schema (@grafana/schema), so the type
// check validates it. `pnpm dashboard` writes it as infra/grafana/pds.json, the file Grafana imports; a
// test checks that file is current and that every metric it graphs is one the product exports.
import type { Dashboard, Panel, RowPanel } from '@grafana/schema';

const datasource = { type: 'prometheus', uid: '${datasource}' };

/** Grafana's grid is 24 columns wide; panels are placed row by row. */
let y = 0;
let id = 0;

function row(title: string): RowPanel {
  const panel: RowPanel = { type: 'row', title, id: ++id, collapsed: false, gridPos: { x: 0, y, w: 24, h: 1 }, panels: [] };
  y += 1;
  return panel;
}

interface Graph {
  title: string;
  description: string;
  /** PromQL with its legend. */
  queries: [expr: string, legend: string][];
  unit?: string;
  /** `stat` for a single figure, `timeseries` (default) for lines over time. */
  type?: 'timeseries' | 'stat';
  width?: number;
}

let x = 0;
function graph({ title, description, queries, unit = 'short', type = 'timeseries', width = 12 }: Graph): Panel {
  if (x + width > 24) {
    x = 0;
    y += 8;
  }
  const panel: Panel = {
    type,
    id: ++id,
    title,
    description,
    datasource,
    gridPos: { x, y, w: width, h: 8 },
    fieldConfig: { defaults: { unit }, overrides: [] },
    options:
      type === 'stat'
        ? { reduceOptions: { calcs: ['lastNotNull'] }, colorMode: 'value' }
        : { legend: { displayMode: 'list', placement: 'bottom' } },
    targets: queries.map(([expr, legendFormat], i) => ({ refId: String.fromCharCode(65 + i), datasource, expr, legendFormat })),
  };
  x += width;
  return panel;
}

/** Starts the next row of panels on a fresh line. */
function section(title: string): RowPanel {
  if (x > 0) y += 8;
  x = 0;
  return row(title);
}

const job = 'job=~"$job"';

export const dashboard: Dashboard = {
  title: 'PDS cluster',
  uid: 'pds-cluster',
  description: 'Requests, errors and latency by route; database pools and replica lag; job queues and deliveries; storage and instances.',
  tags: ['pds'],
  editable: true,
  schemaVersion: 39,
  refresh: '30s',
  time: { from: 'now-6h', to: 'now' },
  timezone: 'browser',
  graphTooltip: 1,
  templating: {
    list: [
      { name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus' },
      {
        name: 'job',
        label: 'Scrape job',
        type: 'query',
        datasource,
        query: 'label_values(http_requests_in_flight, job)',
        refresh: 1,
        includeAll: true,
        multi: true,
        current: { text: 'All', value: '$__all' },
      },
    ],
  },
  panels: [
    section('Requests'),
    graph({
      title: 'Requests by route',
      description: 'Answers per second by route template (never a raw path) and process.',
      queries: [[`sum by (process, route) (rate(http_request_duration_seconds_count{${job}}[5m]))`, '{{process}} {{route}}']],
      unit: 'reqps',
    }),
    graph({
      title: 'Errors by route (5xx)',
      description: 'Server errors per second by route: each is logged with its request id.',
      queries: [
        [`sum by (process, route) (rate(http_request_duration_seconds_count{${job}, status=~"5.."}[5m]))`, '{{process}} {{route}}'],
      ],
      unit: 'reqps',
    }),
    graph({
      title: 'Refusals by status (4xx)',
      description: 'Client errors per second: 401 and 429 rising together is someone guessing passwords.',
      queries: [[`sum by (status) (rate(http_request_duration_seconds_count{${job}, status=~"4.."}[5m]))`, '{{status}}']],
      unit: 'reqps',
    }),
    graph({
      title: 'Error ratio',
      description: 'Share of answers that are 5xx, per process (the PdsHighErrorRate alert fires above 5 % for 10 minutes).',
      queries: [
        [
          `sum by (process) (rate(http_request_duration_seconds_count{${job}, status=~"5.."}[5m])) / sum by (process) (rate(http_request_duration_seconds_count{${job}}[5m]))`,
          '{{process}}',
        ],
      ],
      unit: 'percentunit',
    }),
    section('Latency'),
    ...(['0.5', '0.95', '0.99'] as const).map((q) =>
      graph({
        title: `Latency p${Number(q) * 100} by route`,
        description: `${Number(q) * 100}th percentile of the time to answer, by route template (from the request histogram).`,
        queries: [[`histogram_quantile(${q}, sum by (le, route) (rate(http_request_duration_seconds_bucket{${job}}[5m])))`, '{{route}}']],
        unit: 's',
        width: 8,
      }),
    ),
    graph({
      title: 'Requests in flight',
      description: 'Requests being answered now, per process.',
      queries: [[`sum by (process, instance) (http_requests_in_flight{${job}})`, '{{process}} {{instance}}']],
    }),
    graph({
      title: 'Event loop lag (p99)',
      description: "Node's event loop delay: above a few ms the process is CPU-bound.",
      queries: [[`max by (process, instance) (nodejs_eventloop_lag_p99_seconds{${job}})`, '{{process}} {{instance}}']],
      unit: 's',
    }),
    section('Database'),
    graph({
      title: 'Pool use',
      description:
        'Connections per process: open, idle, and callers waiting for one (waiting above 0 for long: raise DATABASE_POOL_SIZE or add PgBouncer).',
      queries: [[`sum by (process, state) (db_pool_connections{${job}})`, '{{process}} {{state}}']],
      width: 8,
    }),
    graph({
      title: 'Replica lag',
      description: 'How far the streaming replica (DATABASE_REPLICA_URL) is behind; lag-tolerant reads go there.',
      queries: [[`max(db_replica_lag_seconds{${job}})`, 'lag']],
      unit: 's',
      width: 8,
    }),
    graph({
      title: 'Gateway database size',
      description: 'The gateway database on disk.',
      queries: [[`max(pds_database_bytes{${job}})`, 'database']],
      unit: 'bytes',
      width: 8,
    }),
    section('Jobs and deliveries'),
    graph({
      title: 'Queue backlog',
      description:
        'Jobs waiting per queue (every worker reports the same queue: the max is shown). PdsQueueBacklog fires above 1,000 for 15 minutes.',
      queries: [[`max by (queue) (queue_jobs{${job}, state="waiting"})`, '{{queue}}']],
    }),
    graph({
      title: 'Jobs retrying and failed',
      description: 'Delayed jobs (retries and schedules) and failed jobs kept for inspection: retry them from the operator console.',
      queries: [
        [`max by (queue) (queue_jobs{${job}, state="delayed"})`, '{{queue}} delayed'],
        [`max by (queue) (queue_jobs{${job}, state="failed"})`, '{{queue}} failed'],
      ],
    }),
    graph({
      title: 'Webhooks by state',
      description: "Apps' webhooks: ok, retrying (failing and backing off) or failed (given up).",
      queries: [[`max by (state) (pds_webhooks{${job}})`, '{{state}}']],
    }),
    graph({
      title: 'App pushes by state',
      description: "Dex's pushes of certified apps to instances, by state.",
      queries: [[`max by (state) (pds_app_pushes{${job}})`, '{{state}}']],
    }),
    section('Storage and instances'),
    graph({
      title: 'Instances by state',
      description: 'Active, suspended and closing instances of the cluster.',
      queries: [[`max by (state) (pds_instances{${job}})`, '{{state}}']],
      type: 'stat',
      width: 8,
    }),
    graph({
      title: 'Stored bytes',
      description: 'Bytes of files (completed and in the trash) and of data records.',
      queries: [[`max by (kind) (pds_stored_bytes{${job}})`, '{{kind}}']],
      unit: 'bytes',
      width: 8,
    }),
    graph({
      title: 'Stored items',
      description: 'Files and data records.',
      queries: [[`max by (kind) (pds_stored_items{${job}})`, '{{kind}}']],
      width: 8,
    }),
    graph({
      title: 'Instances near a quota',
      description: 'Instances using 90 % or more of their file or record quota.',
      queries: [[`max by (kind) (pds_instances_near_quota{${job}})`, '{{kind}}']],
    }),
    graph({
      title: 'Local store disk',
      description: 'With STORAGE=local: the filesystem holding DATA_DIR, free and total.',
      queries: [[`max by (state) (pds_local_store_bytes{${job}})`, '{{state}}']],
      unit: 'bytes',
    }),
    graph({
      title: 'Cache hit ratio',
      description: 'Instance registry, accounts and verified tokens: a low ratio means more database reads per request.',
      queries: [
        [
          `sum by (cache) (rate(cache_lookups_total{${job}, result="hit"}[5m])) / sum by (cache) (rate(cache_lookups_total{${job}}[5m]))`,
          '{{cache}}',
        ],
      ],
      unit: 'percentunit',
    }),
    graph({
      title: 'Memory',
      description: 'Resident memory per process.',
      queries: [[`max by (process, instance) (process_resident_memory_bytes{${job}})`, '{{process}} {{instance}}']],
      unit: 'bytes',
    }),
  ],
};

/** Every PromQL expression the dashboard graphs. */
export function dashboardQueries(board: Dashboard = dashboard): string[] {
  return (board.panels ?? []).flatMap((panel) => ((panel as Panel).targets ?? []).map((target) => String(target.expr)));
}
