// The CPU that serving one side's requests costs over a run, counted process by process: the server,
// its nginx (when the load goes through it), the PostgreSQL backends of its connections and its own
// Redis. Only processes that serve the side count, so the figure holds on a machine shared with
// other work, which whole-machine CPU does not.
import pg from 'pg';
import { cpuSeconds, cpuSecondsIfRunning, treeCpuSeconds } from './processes';

/** The processes serving one side; the CPU of each is read from /proc. */
export interface ServingProcesses {
  /** The server (for the product: gateway, dex and worker in one process, as `pnpm start` runs them). */
  pid: number;
  /** The proxy's master process, when the load goes through it: its workers count too. */
  proxyPid?: number;
  /** The `application_name` of the server's PostgreSQL connections, which finds their backends. */
  backends?: string;
  /** A Redis server that serves this side alone. */
  redisPid?: number;
}

/** CPU seconds spent over a run, by part. */
export interface ServingCpu {
  server: number;
  proxy?: number;
  database?: number;
  redis?: number;
}

/** A database URL whose connections name themselves `applicationName`, by which their backends are found. */
export function withApplicationName(url: string, applicationName: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', applicationName);
  return u.toString();
}

/**
 * The backends of the connections that named themselves `applicationName` (a connection string's
 * `?application_name=`), through one connection of the bench's own.
 */
export class Backends {
  private constructor(private readonly client: pg.Client) {}

  static async connect(adminUrl: string): Promise<Backends> {
    const client = new pg.Client({ connectionString: adminUrl, application_name: 'bench-meter' });
    await client.connect();
    return new Backends(client);
  }

  async pids(applicationName: string): Promise<number[]> {
    const { rows } = await this.client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
      applicationName,
    ]);
    return rows.map((row) => row.pid);
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/**
 * A pool opens and closes connections as it likes, so the backends are looked up again every
 * POLL_MS during the run: one that appears mid-run counts from its start (a new backend starts at
 * zero), one that ends mid-run up to its last reading.
 */
export const POLL_MS = 250;

/**
 * A run ends once the server and its backends have gone quiet (under SETTLED_SHARE of a core over
 * SETTLE_MS, longer than the product worker's 500 ms between numberings of new events), or after
 * SETTLE_MAX_MS: what a run's requests leave for later is part of their cost.
 */
const SETTLE_MS = 600;
const SETTLED_SHARE = 0.05;
const SETTLE_MAX_MS = 5_000;

export class ServingMeter {
  /** Each backend's CPU when first seen, and when last seen. */
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  /** The samples run one after another: a backend first seen by a later one counts from zero. */
  private polling: Promise<void> = Promise.resolve();
  private failure: unknown;

  private constructor(
    private readonly processes: ServingProcesses,
    private readonly backends: Backends | undefined,
    private readonly start: { server: number; proxy?: number; redis?: number },
  ) {}

  static async start(processes: ServingProcesses, backends?: Backends, pollMs = POLL_MS): Promise<ServingMeter> {
    const meter = new ServingMeter(processes, backends, ServingMeter.read(processes));
    await meter.sample(true);
    if (backends && processes.backends) meter.timer = setInterval(() => void meter.busySeconds(), pollMs);
    return meter;
  }

  private static read({ pid, proxyPid, redisPid }: ServingProcesses) {
    return {
      server: cpuSeconds(pid),
      proxy: proxyPid === undefined ? undefined : treeCpuSeconds(proxyPid),
      redis: redisPid === undefined ? undefined : cpuSeconds(redisPid),
    };
  }

  private async sample(initial: boolean): Promise<void> {
    if (!this.backends || !this.processes.backends) return;
    const listed = await this.backends.pids(this.processes.backends);
    for (const pid of new Set([...listed, ...this.last.keys()])) {
      const cpu = cpuSecondsIfRunning(pid);
      if (cpu === undefined) continue;
      if (!this.first.has(pid)) this.first.set(pid, initial ? cpu : 0);
      this.last.set(pid, cpu);
    }
  }

  /** Waits until the server and its backends are quiet (see SETTLE_MS). */
  async settle(): Promise<void> {
    const started = Date.now();
    let before = await this.busySeconds();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const now = await this.busySeconds();
      if (now - before < (SETTLED_SHARE * SETTLE_MS) / 1000 || Date.now() - started >= SETTLE_MAX_MS) return;
      before = now;
    }
  }

  /** The CPU seconds of the server and of every backend seen so far, now. */
  private async busySeconds(): Promise<number> {
    this.polling = this.polling.then(() => this.sample(false)).catch((error: unknown) => void (this.failure ??= error));
    await this.polling;
    let backends = 0;
    for (const cpu of this.last.values()) backends += cpu;
    return cpuSeconds(this.processes.pid) + backends;
  }

  /** Ends the run: the CPU each part spent since start(). */
  async stop(): Promise<ServingCpu> {
    const end = ServingMeter.read(this.processes);
    clearInterval(this.timer);
    await this.polling;
    if (this.failure) throw this.failure;
    await this.sample(false);
    const since = (now: number | undefined, then: number | undefined) => (now === undefined || then === undefined ? undefined : now - then);
    let database: number | undefined;
    if (this.backends && this.processes.backends) {
      database = 0;
      for (const [pid, cpu] of this.last) database += cpu - (this.first.get(pid) ?? cpu);
    }
    return {
      server: end.server - this.start.server,
      proxy: since(end.proxy, this.start.proxy),
      database,
      redis: since(end.redis, this.start.redis),
    };
  }
}

/** All the parts together. */
export const servingSeconds = (cpu: ServingCpu) => cpu.server + (cpu.proxy ?? 0) + (cpu.database ?? 0) + (cpu.redis ?? 0);
