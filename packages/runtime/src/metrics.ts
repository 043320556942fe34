// Prometheus metrics of one process, served on their own port (METRICS_PORT on BIND_ADDRESS) so they
// are never reachable through the public listener. Per request: one histogram observation and a gauge
// up and down, labelled by route template (never the raw path) and status.
import cluster from 'node:cluster';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Aggregator } from 'prom-client';
import { closeServer, listenError } from './lifecycle';

type JobState = 'waiting' | 'active' | 'delayed' | 'failed';

/** What a cache counts; caches take it as an optional dependency, so they need no metrics library. */
export interface HitCounter {
  hit(): void;
  miss(): void;
}

declare module 'node:http' {
  interface IncomingMessage {
    /** The template of the declared route serving it (its metrics label; never the raw path). */
    routeTemplate?: string;
  }
}

export class Metrics {
  readonly registry = new Registry();
  private readonly duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer a request, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  private readonly inFlight = new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests being answered now',
    registers: [this.registry],
  });
  private readonly dispatchFailures = new Counter({
    name: 'http_dispatch_failures_total',
    help: 'Requests the fast dispatcher could not render itself (a bug: each is logged too)',
    registers: [this.registry],
  });
  private readonly cacheLookups = new Counter({
    name: 'cache_lookups_total',
    help: 'Cache lookups by cache and result (hit ratio = hit / (hit + miss))',
    labelNames: ['cache', 'result'] as const,
    registers: [this.registry],
  });

  constructor(processName: string) {
    this.registry.setDefaultLabels({ process: processName });
    collectDefaultMetrics({ register: this.registry });
  }

  /** A request began (it is in flight until `requestEnded`). */
  requestStarted(): void {
    this.inFlight.inc();
  }

  /** A request's response ended, `started` ms (performance.now()) ago; labelled with its route template. */
  requestEnded(req: IncomingMessage, res: ServerResponse, started: number): void {
    this.inFlight.dec();
    const labels = { method: req.method, route: req.routeTemplate ?? 'unmatched', status: String(res.statusCode) };
    this.duration.observe(labels, (performance.now() - started) / 1000);
  }

  dispatchFailed(): void {
    this.dispatchFailures.inc();
  }

  cache(name: string): HitCounter {
    const hit = this.cacheLookups.labels(name, 'hit');
    const miss = this.cacheLookups.labels(name, 'miss');
    return { hit: () => hit.inc(), miss: () => miss.inc() };
  }

  /** Connections of a database pool by state (total, idle, waiting), read at scrape time. */
  pool(read: () => { total: number; idle: number; waiting: number }): void {
    this.gauge('db_pool_connections', 'Database pool connections: total open, idle, and callers waiting for one', ['state'], async () => {
      const use = read();
      return [
        [{ state: 'total' }, use.total],
        [{ state: 'idle' }, use.idle],
        [{ state: 'waiting' }, use.waiting],
      ];
    });
  }

  /** Jobs per queue and state (waiting, active, delayed, failed), read at scrape time. */
  queues(queues: { name: string; getJobCounts(...states: JobState[]): Promise<Partial<Record<string, number>>> }[]): void {
    const states: JobState[] = ['waiting', 'active', 'delayed', 'failed'];
    this.gauge(
      'queue_jobs',
      'Jobs in each queue by state (failed: kept for inspection, see removeOnFail)',
      ['queue', 'state'],
      async () => {
        const rows: [Record<'queue' | 'state', string>, number][] = [];
        for (const queue of queues) {
          const counts = await queue.getJobCounts(...states);
          for (const state of states) rows.push([{ queue: queue.name, state }, counts[state] ?? 0]);
        }
        return rows;
      },
    );
  }

  /**
   * A gauge read when Prometheus scrapes (pool use, queue depth), so nothing is counted on the hot path.
   * `aggregator`: how GATEWAY_WORKERS processes' values combine (a cluster-wide figure: `max`, not the sum).
   */
  gauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    read: () => Promise<[Partial<Record<L, string>>, number][]>,
    aggregator: Aggregator = 'sum',
  ): void {
    new Gauge({
      name,
      help,
      labelNames,
      aggregator,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [labels, value] of await read()) this.set(labels, value);
      },
    });
  }
}

/** Serves GET /metrics from `read` (and /healthz, for probes of processes that have no other listener). */
export async function serveMetrics(
  read: () => Promise<string>,
  contentType: string,
  port: number,
  host: string,
): Promise<{ server: Server; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      read().then(
        (text) => res.writeHead(200, { 'Content-Type': contentType }).end(text),
        () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics failed\n'),
      );
    } else if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(listenError(error, host, port)));
    server.listen(port, host, () => resolve());
  });
  return { server, close: () => closeServer(server, 1000) };
}

type MetricsConfig = { METRICS_PORT?: number; BIND_ADDRESS: string };

/**
 * The process's metrics and their listener when METRICS_PORT is set; otherwise nothing is collected.
 * A node:cluster worker (GATEWAY_WORKERS > 1) does not listen: it hands its registry to the primary,
 * which serves every worker's metrics summed (startClusterMetrics).
 */
export async function startMetrics(
  processName: string,
  config: MetricsConfig,
): Promise<{ metrics: Metrics; close(): Promise<void> } | undefined> {
  if (config.METRICS_PORT === undefined) return undefined;
  const metrics = new Metrics(processName);
  if (cluster.isWorker) {
    AggregatorRegistry.setRegistries([metrics.registry]);
    // Constructing one installs the worker's answer to the primary's requests (prom-client does it nowhere else).
    new AggregatorRegistry();
    return { metrics, close: async () => undefined };
  }
  const { registry } = metrics;
  const { close } = await serveMetrics(() => registry.metrics(), registry.contentType, config.METRICS_PORT, config.BIND_ADDRESS);
  return { metrics, close };
}

/** In the primary of node:cluster workers: METRICS_PORT answers with all workers' metrics, summed by prom-client. */
export async function startClusterMetrics(config: MetricsConfig): Promise<{ close(): Promise<void> } | undefined> {
  if (config.METRICS_PORT === undefined) return undefined;
  const aggregator = new AggregatorRegistry();
  return serveMetrics(() => aggregator.clusterMetrics(), aggregator.contentType, config.METRICS_PORT, config.BIND_ADDRESS);
}
