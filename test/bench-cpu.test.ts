// What the bench's CPU figures are made of, on real processes: /proc's CPU times of a process and of the
// machine, and the PostgreSQL backends of the connections that name themselves (the test setup's
// PostgreSQL), counted over a run as serving.ts counts them; then one measured run through them all.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Measurer } from '../scripts/bench/measure';
import { benchOptions } from '../scripts/bench/options';
import { cpuSeconds, cpuSecondsIfRunning, loadAverage, machineBusySeconds } from '../scripts/bench/processes';
import { Backends, POLL_MS, ServingMeter, withApplicationName } from '../scripts/bench/serving';

const adminUrl = process.env.TEST_PG_ADMIN_URL as string;

/** Spends `seconds` of this process's CPU (as the kernel tells the process itself). */
function burn(seconds: number): void {
  const start = process.cpuUsage();
  while ((process.cpuUsage(start).user + process.cpuUsage(start).system) / 1e6 < seconds) Math.sqrt(Math.random());
}

const ownCpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

describe('/proc', () => {
  it("reads a process's CPU time as the kernel reports it to the process itself", () => {
    burn(0.2);
    // /proc counts in ticks of 10 ms; the two readings are taken one after the other.
    expect(Math.abs(cpuSeconds(process.pid) - ownCpuSeconds())).toBeLessThan(0.03);
  });

  it('reads nothing of a process that has exited', async () => {
    const child = spawn('true');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(cpuSecondsIfRunning(child.pid as number)).toBeUndefined();
    expect(cpuSecondsIfRunning(process.pid)).toBeGreaterThan(0);
  });

  it("counts this process's work in the machine's busy time, and reads the load average", () => {
    const before = machineBusySeconds();
    burn(0.3);
    expect(machineBusySeconds() - before).toBeGreaterThanOrEqual(0.25);
    expect(loadAverage()).toBeGreaterThanOrEqual(0);
  });
});

describe('PostgreSQL backends found by application_name', () => {
  const name = `bench-test-${randomBytes(4).toString('hex')}`;
  let backends: Backends;
  const clients: pg.Client[] = [];

  /** A connection named as the bench names the product's: `?application_name=` in its URL. */
  async function connect(applicationName = name): Promise<{ client: pg.Client; pid: number }> {
    const client = new pg.Client({ connectionString: withApplicationName(adminUrl, applicationName) });
    await client.connect();
    clients.push(client);
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return { client, pid: rows[0]!.pid };
  }
  const busy = (client: pg.Client) => client.query('SELECT count(*) FROM generate_series(1, 2000000)');

  beforeAll(async () => {
    backends = await Backends.connect(adminUrl);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    await backends.close();
  });

  it('finds the backend of each connection that names itself so, and no other', async () => {
    const ours = await connect();
    await connect(`${name}-other`);
    expect(await backends.pids(name)).toEqual([ours.pid]);
  });

  it('counts the CPU of the backends there at the start, and all of one that appears during the run', async () => {
    const early = await connect();
    const earlyStart = cpuSeconds(early.pid);
    // Read at the start and at the end only: the new backend is first seen at the end.
    const meter = await ServingMeter.start({ pid: process.pid, backends: name }, backends, 3_600_000);
    await busy(early.client);
    const late = await connect();
    await busy(late.client);
    const earlySpent = cpuSeconds(early.pid) - earlyStart;
    const lateSpent = cpuSeconds(late.pid);
    const cpu = await meter.stop();
    // Each spent a busy query's CPU, which the meter must have counted (the first test's idle connection adds nothing).
    for (const spent of [earlySpent, lateSpent]) expect(spent).toBeGreaterThan(0.03);
    expect(Math.abs((cpu.database ?? 0) - (earlySpent + lateSpent))).toBeLessThan(0.03);
    expect(cpu.server).toBeGreaterThanOrEqual(0);
  });

  it('counts the CPU of a backend that ends during the run, up to its last reading', async () => {
    const leaving = await connect();
    const leavingStart = cpuSeconds(leaving.pid);
    const meter = await ServingMeter.start({ pid: process.pid, backends: name }, backends);
    await busy(leaving.client);
    // The meter reads the backends every POLL_MS: let it see what this one spent before it goes.
    await new Promise((resolve) => setTimeout(resolve, 6 * POLL_MS));
    const leavingSpent = cpuSeconds(leaving.pid) - leavingStart;
    await leaving.client.end();
    const cpu = await meter.stop();
    expect(leavingSpent).toBeGreaterThan(0.03);
    expect(Math.abs((cpu.database ?? 0) - leavingSpent)).toBeLessThan(0.03);
  });

  it('lasts, when asked to settle, until the server has done what its requests left for later', async () => {
    const meter = await ServingMeter.start({ pid: process.pid, backends: name }, backends);
    // As the product's worker numbers a run's events after it: some work, a little later.
    setTimeout(() => burn(0.2), POLL_MS);
    await meter.settle();
    const cpu = await meter.stop();
    // /proc counts in ticks of 10 ms, and seconds add up in floating point.
    expect(cpu.server).toBeGreaterThanOrEqual(0.2 - 0.01);
  });
});

describe('a measured run', () => {
  let workDir: string;
  let server: http.Server;
  let pool: pg.Pool;
  let backends: Backends;
  const name = `bench-test-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(os.tmpdir(), 'bench-cpu-test-'));
    backends = await Backends.connect(adminUrl);
    pool = new pg.Pool({ connectionString: withApplicationName(adminUrl, name), max: 4 });
    // Each request costs this process and a backend some CPU.
    server = http.createServer((req, res) => {
      pool.query('SELECT sum(g) FROM generate_series(1, 2000) g').then(
        ({ rows }) => res.end(JSON.stringify(rows)),
        () => res.writeHead(500).end(),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await pool.end();
    await backends.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('gives the server process, its backends, serving as their sum, and the machine less the load generator, per request', async () => {
    const measurer = new Measurer(workDir, benchOptions(['--quick']).settings, backends);
    const port = (server.address() as AddressInfo).port;
    const side = { label: 'test', port, pid: process.pid, backends: name, requests: [{ method: 'GET', path: '/', headers: {} }] };
    const result = await measurer.withCpu(side, 4, 1);
    expect(result.errors).toBe(0);
    expect(result.loadGeneratorCpuSeconds).toBeGreaterThan(0);
    expect(result.cpuUsPerRequest).toBeGreaterThan(0);
    expect(result.databaseCpuUsPerRequest).toBeGreaterThan(0);
    expect(result.proxyCpuUsPerRequest).toBeUndefined();
    expect(result.servingCpuUsPerRequest).toBeCloseTo((result.cpuUsPerRequest ?? 0) + (result.databaseCpuUsPerRequest ?? 0), 6);
    // The machine's busy time holds the serving processes' (give or take /proc/stat's sampled ticks).
    expect(result.machineCpuUsPerRequest).toBeGreaterThan(0.8 * (result.servingCpuUsPerRequest ?? 0));
    expect(result.otherCores).toBeDefined();
    expect(result.loadAverage).toBeGreaterThanOrEqual(0);
  });
});
