// The results of `pnpm bench`: one JSON shape, rendered as the Markdown table it prints.
import type { LoadResult } from './load';
import type { StreamFigure } from './streams';

/** What a route must reach through nginx, each a ratio to the bare server (issue 32; search: issue 25). */
export interface Targets {
  /** Throughput, product ÷ bare, at least. */
  rps?: number;
  /** Serving CPU per request, bare ÷ product, at least. */
  cpu?: number;
  /** p95 latency, product ÷ bare, at most. */
  p95?: number;
}

/** One way of reaching both servers: the product's figures beside the baseline's. */
export interface Pair {
  product: LoadResult;
  baseline: LoadResult;
  /** rps: product/baseline throughput (higher is better); p95: product/baseline latency (lower is better). */
  ratio: number;
  /**
   * Baseline CPU per request / product CPU per request, the throughput ratio both would reach alone on
   * the same cores: the server processes' alone, of everything serving them, and of the machine.
   */
  cpuRatio: number;
  servingCpuRatio?: number;
  machineCpuRatio?: number;
}

export function pairOf(compare: 'rps' | 'p95', product: LoadResult, baseline: LoadResult): Pair {
  const cpu = (key: 'cpuUsPerRequest' | 'servingCpuUsPerRequest' | 'machineCpuUsPerRequest') => {
    const [bare, ours] = [baseline[key], product[key]];
    return bare === undefined || ours === undefined ? undefined : bare / ours;
  };
  return {
    product,
    baseline,
    ratio: compare === 'rps' ? product.rps / baseline.rps : product.p95 / baseline.p95,
    cpuRatio: cpu('cpuUsPerRequest') ?? Number.NaN,
    servingCpuRatio: cpu('servingCpuUsPerRequest'),
    machineCpuRatio: cpu('machineCpuUsPerRequest'),
  };
}

/** The CPU ratio a target is judged by: everything serving the request, else the server process alone. */
const judgedCpu = (pair: Pair) => pair.servingCpuRatio ?? pair.cpuRatio;
const judgedCpuName = (pair: Pair) => (pair.servingCpuRatio === undefined ? 'CPU' : 'serving CPU');

/** The targets a pair misses (a ratio that could not be measured misses). */
export function missedTargetsOf(pair: Pair, targets: Targets): (keyof Targets)[] {
  const missed: (keyof Targets)[] = [];
  if (targets.rps !== undefined && !(pair.ratio >= targets.rps)) missed.push('rps');
  if (targets.p95 !== undefined && !(pair.ratio <= targets.p95)) missed.push('p95');
  if (targets.cpu !== undefined && !(judgedCpu(pair) >= targets.cpu)) missed.push('cpu');
  return missed;
}

/**
 * Others' CPU above this share of the machine (machine less load generator less the serving
 * processes) makes the run's machine figure noise: the figure is marked "not quiet".
 */
export const QUIET_SHARE = 0.1;

export const quiet = (result: LoadResult, cores: number) => result.otherCores === undefined || result.otherCores <= QUIET_SHARE * cores;

export interface RouteFigure {
  name: string;
  compare: 'rps' | 'p95';
  /** Through each server's nginx, configured as infra/compose's: what the targets are about. */
  proxied: Pair;
  direct: Pair;
  /** None for the hello (the sanity line's reference). */
  targets?: Targets;
  met?: boolean;
}

export interface SpreadFigure {
  instances: number;
  one: LoadResult;
  many: LoadResult;
  ratio: number;
  /** One-instance CPU per request / many-instances CPU per request. */
  cpuRatio: number;
  target: number;
  met: boolean;
}

export interface MemoryFigure {
  rssBeforeBytes: number;
  rssAfterBytes: number;
  bytesPerActiveInstance: number;
  targetBytes: number;
  met: boolean;
}

/**
 * `result`: the mix with its logins, its `groups` giving the logins' and the other requests' own
 * latencies (the target is the others' p99); `withoutLogins`: the same mix without them, for what one login costs.
 */
export interface MixedFigure {
  connections: number;
  result: LoadResult;
  withoutLogins: LoadResult;
  loginShare: number;
  p99TargetMs: number;
}

export interface WorkersFigure {
  route: string;
  one: LoadResult;
  two: LoadResult;
  scaling: number;
}

/** The bare hello's serving CPU per request, and every product route that cost less on the same way (which fails the run). */
export interface Sanity {
  helloCpuUs: { proxied: number | undefined; direct: number | undefined };
  cheaperThanHello: string[];
}

export interface Report {
  date: string;
  quick: boolean;
  machine: string;
  /** Cores the machine has: what a CPU-bound figure can use at most. */
  cores: number;
  settings: Record<string, unknown>;
  routes: RouteFigure[];
  sanity?: Sanity;
  spread?: SpreadFigure;
  memory?: MemoryFigure;
  mixed?: MixedFigure;
  workers?: WorkersFigure;
  streams?: (StreamFigure & { uploadRatio: number; downloadRatio: number; target: number; met: boolean })[];
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (n >= 10 ? n.toFixed(0) : n.toFixed(1));
const mark = (met: boolean) => (met ? 'yes' : '**no**');
const ratio = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
/** Whole percents, with a decimal below 10 % (a miss by 0.3 % should not read "by 0 %"). */
const percent = (fraction: number) => `${Math.abs(fraction) < 0.1 ? (fraction * 100).toFixed(1) : Math.round(fraction * 100)} %`;
const load = (r: LoadResult) => `${int(r.rps)} req/s, p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms`;

const errorKinds = (r: LoadResult) =>
  Object.entries(r.errorKinds ?? {})
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');

const cpu = (x: LoadResult) => (x.cpuUsPerRequest === undefined ? '' : `; CPU ${int(x.cpuUsPerRequest)} µs/req`);
const proxyCpu = (x: LoadResult) => (x.proxyCpuUsPerRequest === undefined ? '' : ` (nginx ${int(x.proxyCpuUsPerRequest)})`);

const targetText = (t: Targets) =>
  [t.rps === undefined ? '' : `req/s ≥ ${t.rps}`, t.cpu === undefined ? '' : `CPU ≥ ${t.cpu}`, t.p95 === undefined ? '' : `p95 ≤ ${t.p95}×`]
    .filter(Boolean)
    .join(', ');

/**
 * The route figures one way (through nginx, with the targets; or direct): throughput (p95 for search),
 * then CPU per request of the gateway process, of everything serving, of the machine less the load
 * generator, each product / bare and its ratio; and how busy the machine was with other work.
 */
function routeTable(routes: RouteFigure[], way: 'proxied' | 'direct', cores: number): string[] {
  const judged = way === 'proxied';
  const lines = [
    `| figure | req/s (search: p95), product / bare | ratio | gateway process CPU µs/req | ratio | serving CPU µs/req | ratio | machine CPU less wrk µs/req | ratio | load avg (others' CPU) |${judged ? ' target | met |' : ''}`,
    `|---|---|---|---|---|---|---|---|---|---|${judged ? '---|---|' : ''}`,
  ];
  for (const r of routes) {
    const { product, baseline, ...pair } = r[way];
    const p95 = r.compare === 'p95';
    const speed = p95 ? `p95 ${ms(product.p95)} / ${ms(baseline.p95)} ms` : `${int(product.rps)} / ${int(baseline.rps)}`;
    const both = (key: 'cpuUsPerRequest' | 'servingCpuUsPerRequest' | 'machineCpuUsPerRequest') => {
      const [ours, bare] = [product[key], baseline[key]];
      return ours === undefined || bare === undefined ? '—' : `${int(ours)} / ${int(bare)}`;
    };
    const calm = quiet(product, cores) && quiet(baseline, cores);
    const most = (key: 'loadAverage' | 'otherCores') => Math.max(product[key] ?? 0, baseline[key] ?? 0);
    const load = product.loadAverage === undefined ? '—' : `${most('loadAverage').toFixed(1)} (${most('otherCores').toFixed(2)} cores)`;
    const cells = [
      r.name,
      speed,
      `${ratio(pair.ratio)}${p95 ? '×' : ''}`,
      both('cpuUsPerRequest'),
      ratio(pair.cpuRatio),
      both('servingCpuUsPerRequest'),
      pair.servingCpuRatio === undefined ? '—' : ratio(pair.servingCpuRatio),
      both('machineCpuUsPerRequest'),
      pair.machineCpuRatio === undefined ? '—' : `${ratio(pair.machineCpuRatio)}${calm ? '' : ', not quiet'}`,
      load,
    ];
    if (judged) cells.push(r.targets ? targetText(r.targets) : '—', r.met === undefined ? '—' : mark(r.met));
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines;
}

function sanityLines(sanity: Sanity): string[] {
  const us = (cpu: number | undefined) => (cpu === undefined ? 'unknown' : `${int(cpu)} µs`);
  const hello = `the bare hello cost ${us(sanity.helloCpuUs.proxied)} of serving CPU per request through nginx and ${us(sanity.helloCpuUs.direct)} direct`;
  if (sanity.cheaperThanHello.length === 0) return [`Sanity: ${hello}, no product route less (within a tenth).`];
  return [
    `**Sanity check failed**: ${hello}, more than a tenth above ${sanity.cheaperThanHello.join('; ')}. No route can cost less than a`,
    'node:http hello: the measurement is off (the requests, the connections, the processes), and no ratio of this run is to be trusted.',
  ];
}

function otherFigures(report: Report): string[] {
  const lines: string[] = [];
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
  if (report.mixed) lines.push(...mixedRows(report.mixed));
  if (report.workers) {
    const w = report.workers;
    lines.push(`| ${w.route}, GATEWAY_WORKERS=2 vs 1 | ${load(w.two)} | ${load(w.one)} (1 worker) | ${ratio(w.scaling)} | — | — |`);
  }
  return lines.length === 0 ? [] : ['', '| figure | product | reference | ratio | target | met |', '|---|---|---|---|---|---|', ...lines];
}

const mixedMet = (mixed: MixedFigure) => {
  const others = mixed.result.groups?.other;
  return others !== undefined && others.p99 <= mixed.p99TargetMs && mixed.result.errors === 0;
};

function mixedRows(mixed: MixedFigure): string[] {
  const { result, withoutLogins, loginShare, connections, p99TargetMs } = mixed;
  // The product's CPU per request covers all its threads (scrypt runs on libuv's pool).
  const whole = (r: LoadResult) => `${load(r)}, ${int(r.errors)} errors${r.errors ? ` (${errorKinds(r)})` : ''}${cpu(r)}${proxyCpu(r)}`;
  const group = (name: string) => {
    const g = result.groups?.[name];
    return g
      ? `${int(g.requests)} answered, p50 ${ms(g.p50)} ms, p95 ${ms(g.p95)} ms, p99 ${ms(g.p99)} ms, ${int(g.errors)} errors`
      : 'not measured';
  };
  const rows = [
    `| mixed traffic through nginx, ${connections} connections: the requests other than logins | ${group('other')} | — | — | p99 ≤ ${ms(p99TargetMs)} ms, no errors | ${mark(mixedMet(mixed))} |`,
    `| mixed: its logins (${percent(loginShare)} of the requests) | ${group('login')} | — | — | — | — |`,
    `| mixed: the whole mix (uploads, search, data, logins) | ${whole(result)} | — | — | — | — |`,
    `| the same mix without its logins (scrypt) | ${whole(withoutLogins)} | — | — | — | — |`,
  ];
  const logins = loginCost(mixed);
  if (logins)
    rows.push(
      `| mixed: CPU of one login | ${ms(logins.perLoginUs / 1000)} ms, ${percent(logins.cpuShare)} of the mix's CPU | — | — | — | — |`,
    );
  return rows;
}

export function markdownReport(report: Report): string {
  const lines = [
    `# pnpm bench${report.quick ? ' --quick' : ''}: ${report.date}`,
    '',
    `${report.machine}; load generator wrk; medians of ${String(report.settings.rounds)} interleaved rounds of ${String(report.settings.seconds)} s (writes: ${String(report.settings.writeRounds)}).`,
    '',
    'Each server is measured through its own nginx, configured as infra/compose configures it (the targets are about',
    'that), and directly. Ratios: throughput product ÷ bare; p95 product ÷ bare (lower is better); CPU per request',
    'bare ÷ product, the throughput ratio each would reach alone on the same cores (higher is better). CPU per request',
    'in µs, product / bare: the gateway process alone (the product runs gateway, dex and worker in one process, as',
    '`pnpm start` does); serving: that process, its nginx (through nginx), its PostgreSQL backends and its own Redis,',
    'which the CPU targets are judged by; the machine: every core busy less the load generator, which counts whatever',
    `else ran: "not quiet" when what else ran (the others' CPU, in cores) took more than ${QUIET_SHARE * 100} % of the machine.`,
    ...(report.routes.length > 0
      ? [
          '',
          '### Through nginx',
          '',
          ...routeTable(report.routes, 'proxied', report.cores),
          '',
          '### Direct',
          '',
          ...routeTable(report.routes, 'direct', report.cores),
        ]
      : []),
    ...(report.sanity ? ['', ...sanityLines(report.sanity)] : []),
    ...otherFigures(report),
  ];
  const missed = missedTargets(report);
  if (missed.length) lines.push('', '## Targets missed in this run', '', ...missed.map((line) => `- ${line}`));
  return lines.join('\n') + '\n';
}

/**
 * Each target this run missed, by how much, and what the run's own figures say about why: whether the
 * product's CPU per request is at fault (a miss on req/s or latency alone, with the CPU ratio met, is the
 * shared machine), and for the mixed traffic the floor that its CPU per request puts on the latency.
 */
function missedTargets(report: Report): string[] {
  const missed: string[] = [];
  const cpuVerdict = (cpuRatio: number, target: number) =>
    cpuRatio >= target
      ? `by CPU per request it reaches ${ratio(cpuRatio)}, which meets the target: the gap is in scheduling on the shared machine, not in the product's work`
      : `by CPU per request it reaches ${ratio(cpuRatio)}: the product spends that much more CPU per request (BENCH_CPU_PROF shows where)`;
  for (const r of report.routes) if (r.met === false && r.targets) missed.push(routeMiss(r, r.targets));
  for (const s of report.streams ?? []) {
    for (const [way, value, mbps] of [
      ['upload', s.uploadRatio, s.uploadMBps],
      ['download', s.downloadRatio, s.downloadMBps],
    ] as const) {
      if (value >= s.target) continue;
      // What the gap is per transfer: a fixed cost shows as milliseconds, a slower stream as a ratio at every size.
      const transferMs = (rate: number) => ((s.mib * 2 ** 20) / 1e6 / rate) * 1000;
      const extra = `each transfer took ${ms(transferMs(mbps.product) - transferMs(mbps.baseline))} ms longer (${ms(transferMs(mbps.product))} against ${ms(transferMs(mbps.baseline))} ms)`;
      const why =
        way === 'upload'
          ? 'an upload also makes its new name durable, a second device flush (the folder’s fsync after the rename, beside a second read of the file’s row) that the baseline’s single fsync does not make'
          : 'a download also verifies the address and decrypts';
      missed.push(
        `local store ${way} of ${s.mib} MiB: ${ratio(value)} of the bare server against ${s.target}, short by ${percent(1 - value / s.target)}; ${extra}: ${why}. The median of single transfers on a disk shared with everything else; docs/performance.md § Local store streams gives what each step costs and the spread between runs.`,
      );
    }
  }
  if (report.spread && !report.spread.met) {
    const { ratio: r, cpuRatio, target } = report.spread;
    missed.push(
      `file GET over many instances: ${ratio(r)} of one instance's throughput against ${target}, short by ${percent(1 - r / target)}; ${cpuVerdict(cpuRatio, target)}.`,
    );
  }
  if (report.memory && !report.memory.met) {
    const m = report.memory;
    missed.push(
      `memory per active instance: ${(m.bytesPerActiveInstance / 1024).toFixed(2)} KiB against ${m.targetBytes / 1024} KiB, over by ${percent(m.bytesPerActiveInstance / m.targetBytes - 1)}; what the product process then holds (heap and buffers) is in its log with BENCH_LOGS.`,
    );
  }
  if (report.mixed && !mixedMet(report.mixed)) missed.push(mixedMiss(report.mixed, report.cores));
  return missed;
}

/**
 * A route's miss through nginx: each target missed and by how much, where the serving CPU goes, and
 * whether a miss on throughput or latency is the product's CPU or the machine's scheduling.
 */
function routeMiss(r: RouteFigure, targets: Targets): string {
  const { proxied, direct } = r;
  const served = judgedCpu(proxied);
  const how = missedTargetsOf(proxied, targets).map((criterion) => {
    if (criterion === 'rps') {
      const t = targets.rps as number;
      return `${ratio(proxied.ratio)} of the bare throughput against ${t}, short by ${percent(1 - proxied.ratio / t)}`;
    }
    if (criterion === 'p95') {
      const t = targets.p95 as number;
      return `${ratio(proxied.ratio)}× the bare p95 against at most ${t}×, over by ${percent(proxied.ratio / t - 1)}`;
    }
    const t = targets.cpu as number;
    return `${ratio(served)} of the bare by ${judgedCpuName(proxied)} per request against ${t}, short by ${percent(1 - served / t)}`;
  });
  const directRatios = `direct: ${ratio(direct.ratio)}${r.compare === 'p95' ? '×' : ''}, by ${judgedCpuName(direct)} ${ratio(judgedCpu(direct))}`;
  // A throughput or latency target read as a CPU ratio: would the product keep up on CPU alone?
  const wanted = targets.rps ?? (targets.p95 === undefined ? undefined : 1 / targets.p95);
  const verdict =
    !missedTargetsOf(proxied, { cpu: targets.cpu }).length && wanted !== undefined && served >= wanted
      ? `by ${judgedCpuName(proxied)} per request it reaches ${ratio(served)}, which meets the target: the gap is in scheduling on the shared machine, not in the product's work`
      : `by ${judgedCpuName(proxied)} per request it reaches ${ratio(served)}: the product spends that much more CPU per request (BENCH_CPU_PROF shows where in its process)`;
  return `${r.name}, through nginx: ${how.join('; ')} (${directRatios}); ${verdict}. ${whereCpuGoes(proxied)}`;
}

/** The serving CPU per request by part, product / bare. */
function whereCpuGoes({ product, baseline }: Pair): string {
  const parts = (
    [
      ['gateway process', 'cpuUsPerRequest'],
      ['nginx', 'proxyCpuUsPerRequest'],
      ['PostgreSQL backends', 'databaseCpuUsPerRequest'],
      ['Redis', 'redisCpuUsPerRequest'],
    ] as const
  )
    .filter(([, key]) => product[key] !== undefined || baseline[key] !== undefined)
    .map(([name, key]) => `${name} ${int(product[key] ?? 0)} / ${int(baseline[key] ?? 0)}`);
  return `Serving CPU per request, product / bare, in µs: ${parts.join(', ')}.`;
}

/** Why the mix misses its target: the CPU its logins take, and the mean latency that CPU per request allows. */
function mixedMiss(mixed: MixedFigure, cores: number): string {
  const { result, withoutLogins, loginShare, connections, p99TargetMs } = mixed;
  const others = result.groups?.other;
  if (!others) return 'mixed traffic: the latencies of the requests other than logins were not measured.';
  const amount = `the requests other than logins had a p99 of ${ms(others.p99)} ms against ${ms(p99TargetMs)} ms, ${ratio(others.p99 / p99TargetMs)}× over${result.errors ? `, and the mix had ${int(result.errors)} errors` : ''}`;
  const logins = loginCost(mixed);
  if (!logins || result.cpuUsPerRequest === undefined) return `mixed traffic: ${amount}.`;
  // Little's law: each connection waits for its answer, so the mean latency is connections / throughput,
  // and the throughput cannot exceed every core busy with this mix's CPU per request.
  const maxRps = (cores * 1e6) / result.cpuUsPerRequest;
  const meanFloorMs = (connections / maxRps) * 1000;
  const rest =
    withoutLogins.p99 <= p99TargetMs
      ? `without the logins the same mix meets it (p99 ${ms(withoutLogins.p99)} ms)`
      : `without the logins the mix still misses it (p99 ${ms(withoutLogins.p99)} ms)`;
  return (
    `mixed traffic: ${amount}. The logins are ${percent(loginShare)} of the requests and ${percent(logins.cpuShare)} of the CPU ` +
    `(${ms(logins.perLoginUs / 1000)} ms each, nearly all scrypt, N=16384 r=8, which stays: weaker password hashing is not a speed-up to make); ${rest}. ` +
    `At ${ms(result.cpuUsPerRequest / 1000)} ms of CPU per request, ${cores} cores serve at most ${int(maxRps)} req/s, so ${connections} connections ` +
    `wait at least ${ms(meanFloorMs)} ms on average (Little's law), and the other requests share the cores with the logins' hashing ` +
    `(PostgreSQL, nginx and the load generator run on the same cores).`
  );
}

/** What one login adds (the mix's CPU per request minus the rest's share of it, per login), and its share of the mix's CPU. */
function loginCost(mixed: MixedFigure): { perLoginUs: number; cpuShare: number } | undefined {
  const { result, withoutLogins, loginShare } = mixed;
  if (result.cpuUsPerRequest === undefined || withoutLogins.cpuUsPerRequest === undefined) return undefined;
  const perLoginUs = (result.cpuUsPerRequest - (1 - loginShare) * withoutLogins.cpuUsPerRequest) / loginShare;
  return { perLoginUs, cpuShare: (loginShare * perLoginUs) / result.cpuUsPerRequest };
}
