// Measured runs: the load generator against one server, with the CPU that server (and the proxy in
// front of it, if any) spent per request, and interleaved rounds of several sides (A,B,C,A,B,C,…)
// reduced to each side's medians, so that a change in the machine's load falls on every side alike.
import { runLoad, type BenchRequest, type LoadResult } from './load';
import type { Settings } from './options';
import { cpuSeconds, treeCpuSeconds } from './processes';

export interface Side {
  /** For the log and for a failure's message. */
  label: string;
  /** Where the load goes: the server itself, or the proxy in front of it. */
  port: number;
  /** The server whose CPU per request is measured. */
  pid: number;
  /** The proxy's master process, when the load goes through it: its workers' CPU is measured too. */
  proxyPid?: number;
  requests: BenchRequest[];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

export function medianResult(results: LoadResult[]): LoadResult {
  const pick = (k: 'requests' | 'seconds' | 'rps' | 'p50' | 'p95' | 'p99' | 'errors' | 'cpuUsPerRequest' | 'proxyCpuUsPerRequest') =>
    median(results.map((r) => r[k] ?? 0));
  const every = (k: 'cpuUsPerRequest' | 'proxyCpuUsPerRequest') => (results.every((r) => r[k] !== undefined) ? pick(k) : undefined);
  return {
    requests: pick('requests'),
    seconds: pick('seconds'),
    rps: pick('rps'),
    p50: pick('p50'),
    p95: pick('p95'),
    p99: pick('p99'),
    errors: pick('errors'),
    cpuUsPerRequest: every('cpuUsPerRequest'),
    proxyCpuUsPerRequest: every('proxyCpuUsPerRequest'),
  };
}

/**
 * A run whose requests failed measured the failures, not the route: the bench stops there. (The bare
 * hello of 2026-11-25 was 12,933 400-answers a second on new connections, and was reported as a figure.)
 */
export function requireNoErrors(label: string, result: LoadResult): LoadResult {
  if (result.errors === 0) return result;
  const kinds = Object.entries(result.errorKinds ?? {})
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
  throw new Error(`${label}: ${result.errors} of ${result.requests} requests failed (${kinds}); its figures would be the failures'`);
}

export class Measurer {
  constructor(
    private readonly workDir: string,
    readonly settings: Settings,
  ) {}

  load(port: number, requests: BenchRequest[], connections: number, seconds = this.settings.seconds): Promise<LoadResult> {
    return runLoad({ port, requests, connections, seconds, workDir: this.workDir });
  }

  /** A run that also measures CPU per request: steadier than req/s on a shared machine. */
  async withCpu(side: Side, connections: number, seconds = this.settings.seconds): Promise<LoadResult> {
    const before = cpuSeconds(side.pid);
    const proxyBefore = side.proxyPid === undefined ? 0 : treeCpuSeconds(side.proxyPid);
    const result = await this.load(side.port, side.requests, connections, seconds);
    const perRequest = (cpu: number) => (cpu * 1e6) / Math.max(1, result.requests);
    return {
      ...result,
      cpuUsPerRequest: perRequest(cpuSeconds(side.pid) - before),
      proxyCpuUsPerRequest: side.proxyPid === undefined ? undefined : perRequest(treeCpuSeconds(side.proxyPid) - proxyBefore),
    };
  }

  /** Warms every side up, then runs the rounds; each side's medians, in the order given. Any failed request fails the bench. */
  async interleaved(sides: Side[], connections: number): Promise<LoadResult[]> {
    for (const side of sides)
      requireNoErrors(`${side.label} (warm-up)`, await this.load(side.port, side.requests, connections, this.settings.warmSeconds));
    const results = sides.map((): LoadResult[] => []);
    for (let round = 0; round < this.settings.rounds; round++) {
      for (const [i, side] of sides.entries()) results[i]?.push(requireNoErrors(side.label, await this.withCpu(side, connections)));
    }
    return results.map(medianResult);
  }
}
