// The results of `pnpm bench`: one JSON shape, rendered as the Markdown table it prints.
import type { LoadResult } from './load';
import type { StreamFigure } from './streams';

export interface RouteFigure {
  name: string;
  /** rps: product/baseline throughput (higher is better); p95: product/baseline latency (lower is better). */
  compare: 'rps' | 'p95';
  product: LoadResult;
  baseline: LoadResult;
  ratio: number;
  /** Baseline CPU per request / product CPU per request: the throughput ratio both would reach alone on one core. */
  cpuRatio: number;
  target: number;
  met: boolean;
}

export interface Report {
  date: string;
  quick: boolean;
  loadGenerator: string;
  machine: string;
  settings: Record<string, unknown>;
  routes: RouteFigure[];
  spread?: {
    instances: number;
    one: LoadResult;
    many: LoadResult;
    ratio: number;
    /** One-instance CPU per request / many-instances CPU per request. */
    cpuRatio: number;
    target: number;
    met: boolean;
  };
  memory?: { rssBeforeBytes: number; rssAfterBytes: number; bytesPerActiveInstance: number; targetBytes: number; met: boolean };
  /** `withoutLogins`: the same mix with its 2 logins per 20 requests left out (what the rest reaches beside scrypt). */
  mixed?: { connections: number; result: LoadResult; withoutLogins: LoadResult; loginShare: number; p99TargetMs: number };
  workers?: { route: string; one: LoadResult; two: LoadResult; scaling: number };
  streams?: (StreamFigure & { uploadRatio: number; downloadRatio: number; target: number; met: boolean })[];
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (n >= 10 ? n.toFixed(0) : n.toFixed(1));
const mark = (met: boolean) => (met ? 'yes' : '**no**');
const ratio = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const load = (r: LoadResult) => `${int(r.rps)} req/s, p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms`;

const errorKinds = (r: LoadResult) =>
  Object.entries(r.errorKinds ?? {})
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');

export function markdownReport(report: Report): string {
  const lines = [
    `# pnpm bench${report.quick ? ' --quick' : ''}: ${report.date}`,
    '',
    `${report.machine}; load generator ${report.loadGenerator}; medians of ${String(report.settings.rounds)} interleaved rounds of ${String(report.settings.seconds)} s.`,
    '',
    'Ratios are product / baseline; "by CPU/req" is baseline CPU per request / product CPU per request, the',
    'throughput ratio each would reach alone on a core, which holds up better than req/s on a shared machine.',
    '',
    '| figure | product | bare node:http + pg | ratio | target | met |',
    '|---|---|---|---|---|---|',
  ];
  const cpu = (x: LoadResult) => (x.cpuUsPerRequest === undefined ? '' : `; CPU ${int(x.cpuUsPerRequest)} µs/req`);
  for (const r of report.routes) {
    const figure = (x: LoadResult) =>
      (r.compare === 'p95' ? `p95 ${ms(x.p95)} ms (${int(x.rps)} req/s)` : `${int(x.rps)} req/s, p50 ${ms(x.p50)}, p99 ${ms(x.p99)} ms`) +
      cpu(x);
    const target = r.compare === 'p95' ? `≤ ${r.target}× slower` : `≥ ${r.target}`;
    lines.push(
      `| ${r.name} | ${figure(r.product)} | ${figure(r.baseline)} | ${ratio(r.ratio)}${r.compare === 'p95' ? '×' : ''} (by CPU/req: ${ratio(r.cpuRatio)}) | ${target} | ${mark(r.met)} |`,
    );
  }
  for (const s of report.streams ?? []) {
    lines.push(
      `| local store upload ${s.mib} MiB vs write+fsync | ${int(s.uploadMBps.product)} MB/s | ${int(s.uploadMBps.baseline)} MB/s (disk alone ${int(s.diskMBps.write)}) | ${ratio(s.uploadRatio)} | ≥ ${s.target} | ${mark(s.uploadRatio >= s.target)} |`,
      `| local store download ${s.mib} MiB vs read | ${int(s.downloadMBps.product)} MB/s | ${int(s.downloadMBps.baseline)} MB/s (disk alone ${int(s.diskMBps.read)}) | ${ratio(s.downloadRatio)} | ≥ ${s.target} | ${mark(s.downloadRatio >= s.target)} |`,
    );
  }
  if (report.spread) {
    const s = report.spread;
    lines.push(
      `| file GET over ${int(s.instances)} active instances vs one instance | ${int(s.many.rps)} req/s${cpu(s.many)} | ${int(s.one.rps)} req/s${cpu(s.one)} (one instance) | ${ratio(s.ratio)} (by CPU/req: ${ratio(s.cpuRatio)}) | ≥ ${s.target} | ${mark(s.met)} |`,
    );
  }
  if (report.memory) {
    const m = report.memory;
    lines.push(
      `| product memory per active instance | ${(m.bytesPerActiveInstance / 1024).toFixed(2)} KiB (RSS ${int(m.rssBeforeBytes / 2 ** 20)} → ${int(m.rssAfterBytes / 2 ** 20)} MiB) | — | — | ≤ ${m.targetBytes / 1024} KiB | ${mark(m.met)} |`,
    );
  }
  if (report.mixed) {
    const { result, withoutLogins, loginShare, connections, p99TargetMs } = report.mixed;
    // The product's CPU per request covers all its threads (scrypt runs on libuv's pool).
    const mixed = (r: LoadResult) => `${load(r)}, ${int(r.errors)} errors${r.errors ? ` (${errorKinds(r)})` : ''}${cpu(r)}`;
    const met = (r: LoadResult) => mark(r.p99 <= p99TargetMs && r.errors === 0);
    lines.push(
      `| mixed traffic, ${connections} connections (uploads, search, data, login) | ${mixed(result)} | — | — | p99 ≤ ${ms(p99TargetMs)} ms, no errors | ${met(result)} |`,
      `| the same mix without its logins (scrypt) | ${mixed(withoutLogins)} | — | — | (same, for comparison) | ${met(withoutLogins)} |`,
    );
    if (result.cpuUsPerRequest !== undefined && withoutLogins.cpuUsPerRequest !== undefined) {
      // What one login adds: the mix's CPU per request minus the rest's share of it, per login.
      const perLogin = (result.cpuUsPerRequest - (1 - loginShare) * withoutLogins.cpuUsPerRequest) / loginShare;
      const share = (loginShare * perLogin) / result.cpuUsPerRequest;
      lines.push(
        `| mixed: CPU of one login (${Math.round(loginShare * 100)} % of the requests) | ${ms(perLogin / 1000)} ms, ${Math.round(share * 100)} % of the mix's CPU | — | — | — | — |`,
      );
    }
  }
  if (report.workers) {
    const w = report.workers;
    lines.push(`| ${w.route}, GATEWAY_WORKERS=2 vs 1 | ${load(w.two)} | ${load(w.one)} (1 worker) | ${ratio(w.scaling)} | — | — |`);
  }
  return lines.join('\n') + '\n';
}
