// Measured runs: the load generator against one server, with the CPU per request of that server, of
// everything that serves it (serving.ts) and of the whole machine less the load generator, and
// interleaved rounds of several sides (A,B,C,A,B,C,…) reduced to each side's medians, so that a
// change in the machine's load falls on every side alike.
import { runLoad, type BenchRequest, type LoadResult } from './load';
import type { Settings } from './options';
import { loadAverage, machineBusySeconds } from './processes';
import { ServingMeter, servingSeconds, type Backends, type ServingProcesses } from './serving';

/** A server under load: `pid` its process, `proxyPid` its nginx when the load goes through it, its backends and Redis. */
export interface Side extends ServingProcesses {
  /** For the log and for a failure's message. */
  label: string;
  /** Where the load goes: the server itself, or the proxy in front of it. */
  port: number;
  requests: BenchRequest[];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const ALWAYS = ['requests', 'seconds', 'rps', 'p50', 'p95', 'p99', 'errors'] as const;
const MEASURED = [
  'cpuUsPerRequest',
  'proxyCpuUsPerRequest',
  'databaseCpuUsPerRequest',
  'redisCpuUsPerRequest',
  'servingCpuUsPerRequest',
  'machineCpuUsPerRequest',
  'otherCores',
  'loadAverage',
] as const;

/** Each figure's median over the runs (a figure some run lacks is left out). */
export function medianResult(results: LoadResult[]): LoadResult {
  const result = {} as LoadResult;
  for (const key of ALWAYS) result[key] = median(results.map((r) => r[key]));
  for (const key of MEASURED) {
    const values = results.map((r) => r[key]);
    if (values.every((v) => v !== undefined)) result[key] = median(values);
  }
  return result;
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
    /** What finds a side's PostgreSQL backends (the sides name theirs); without it no serving CPU is measured. */
    private readonly backends?: Backends,
  ) {}

  load(port: number, requests: BenchRequest[], connections: number, seconds = this.settings.seconds): Promise<LoadResult> {
    return runLoad({ port, requests, connections, seconds, workDir: this.workDir });
  }

  /**
   * A run that also measures CPU per request: steadier than req/s on a shared machine, and the serving
   * processes' own (with `backends` to find the side's PostgreSQL backends) steadier than the machine's.
   * It lasts until the server is quiet again, so that work its requests left for later counts too.
   */
  async withCpu(side: Side, connections: number, seconds = this.settings.seconds): Promise<LoadResult> {
    const meter = await ServingMeter.start(side, side.backends === undefined ? undefined : this.backends);
    const machineBefore = machineBusySeconds();
    const started = performance.now();
    const result = await this.load(side.port, side.requests, connections, seconds);
    await meter.settle();
    const wallSeconds = (performance.now() - started) / 1000;
    const machine = machineBusySeconds() - machineBefore - (result.loadGeneratorCpuSeconds ?? 0);
    const cpu = await meter.stop();
    const perRequest = (seconds: number | undefined) =>
      seconds === undefined ? undefined : (seconds * 1e6) / Math.max(1, result.requests);
    // Serving CPU only when the backends were counted: the server and nginx alone are not what serves.
    const serving = cpu.database === undefined ? undefined : servingSeconds(cpu);
    return {
      ...result,
      cpuUsPerRequest: perRequest(cpu.server),
      proxyCpuUsPerRequest: perRequest(cpu.proxy),
      databaseCpuUsPerRequest: perRequest(cpu.database),
      redisCpuUsPerRequest: perRequest(cpu.redis),
      servingCpuUsPerRequest: perRequest(serving),
      machineCpuUsPerRequest: perRequest(machine),
      otherCores: serving === undefined ? undefined : (machine - serving) / wallSeconds,
      loadAverage: loadAverage(),
    };
  }

  /** Waits until what the side's server was doing (a warm-up's deferred work) is done: see ServingMeter.settle. */
  async settle(side: Side): Promise<void> {
    const meter = await ServingMeter.start(side, side.backends === undefined ? undefined : this.backends);
    await meter.settle();
    await meter.stop();
  }

  /** Warms every side up, then runs the rounds; each side's medians, in the order given. Any failed request fails the bench. */
  async interleaved(sides: Side[], connections: number, rounds = this.settings.rounds): Promise<LoadResult[]> {
    for (const side of sides) {
      requireNoErrors(`${side.label} (warm-up)`, await this.load(side.port, side.requests, connections, this.settings.warmSeconds));
      await this.settle(side);
    }
    const results = sides.map((): LoadResult[] => []);
    for (let round = 0; round < rounds; round++) {
      for (const [i, side] of sides.entries()) results[i]?.push(requireNoErrors(side.label, await this.withCpu(side, connections)));
    }
    return results.map(medianResult);
  }
}
