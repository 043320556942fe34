// How the processes start when they cannot, and how they stop: without configuration, on a port
// something else holds, `pnpm start` a second time on the same DATA_DIR, and Ctrl-C right after a read.
// Each is a real process, as an operator would start it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../scripts/lib/ports';
import { eventually } from './support/eventually';
import { requireEnv } from './support/gateway';
import { createDatabaseFrom } from './support/templates';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a TypeScript entry point as `pnpm dev` would, until it exits (or is killed after `timeoutMs`),
 * in a session of its own (as a terminal would start it): `leftovers` finds what it leaves running.
 */
function run(entry: string, env: Record<string, string>, timeoutMs = 120_000): Promise<Run & { pid: number }> {
  const child = spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, pid: child.pid as number });
    }),
  );
}

/**
 * The processes still running of a run: those of its session (its children, unless they left it) and
 * any whose command line names its DATA_DIR (embedded PostgreSQL runs in a session of its own).
 */
function leftovers(session: number, dataDir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // pid (comm) state ppid pgrp session …; comm may hold spaces.
      const [state, , , sessionId] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // A zombie runs nothing: it waits for init, its new parent, to read its exit status.
      if (state === 'Z') continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (Number(sessionId) === session || command.includes(dataDir)) found.push(`${pid} ${command}`);
    } catch {
      // It ended meanwhile.
    }
  }
  return found;
}

/** Removes the Redis keys of a `pnpm start` on `dataDir` (under the prefix it keeps there). */
async function dropQueuePrefix(dataDir: string, redisUrl: string): Promise<void> {
  const prefixFile = path.join(dataDir, 'queue-prefix');
  if (!existsSync(prefixFile)) return;
  const redis = new Redis(redisUrl);
  const match = `${readFileSync(prefixFile, 'utf8').trim()}:*`;
  for await (const keys of redis.scanStream({ match })) if ((keys as string[]).length) await redis.del(...(keys as string[]));
  redis.disconnect();
}

/** One line, as the operator reads it: no stack, no second message. */
const oneLine = (text: string) => text.trimEnd().split('\n');

const quiet = { LOG_LEVEL: 'warn', MASTER_KEY: randomBytes(32).toString('hex') };

/** The command line of this process (the holder of the taken port), as the line names it: cut at 80 characters. */
function holderCommand(): string {
  const command = readFileSync(`/proc/${process.pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  return command.length > 80 ? `${command.slice(0, 79)}…` : command;
}

describe('a process without its configuration', () => {
  it('prints one line naming every missing variable, and exits 1', async () => {
    const [gateway, worker] = await Promise.all([run('apps/gateway/src/main.ts', {}), run('apps/dex/src/worker-main.ts', {})]);
    expect(gateway).toEqual({
      code: 1,
      pid: expect.any(Number),
      stdout: '',
      stderr: 'Invalid configuration: DATABASE_URL: is required; REDIS_URL: is required; MASTER_KEY: is required\n',
    });
    expect(worker).toEqual({
      code: 1,
      pid: expect.any(Number),
      stdout: '',
      stderr: 'Invalid configuration: DEX_DATABASE_URL: is required; REDIS_URL: is required; MASTER_KEY: is required\n',
    });
  });
});

describe('a port that something else holds', () => {
  let holder: net.Server;
  let port: number;
  const drops: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve));
    for (const drop of drops) await drop();
  });

  it('stops pnpm start with one line naming the port and its holder, and leaves nothing running', async () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'pds-taken-port-'));
    // Run as root, embedded PostgreSQL runs as the postgres user, who must reach DATA_DIR inside.
    chmodSync(folder, 0o755);
    const dataDir = path.join(folder, 'data');
    try {
      // Its own embedded PostgreSQL (no DATABASE_URL): started, then stopped when the gateway cannot listen.
      const result = await run('scripts/start.ts', {
        ...quiet,
        DATA_DIR: dataDir,
        PORT: String(port),
        DEX_PORT: String(await freePort()),
        REDIS_URL: requireEnv('TEST_REDIS_URL'),
      });
      expect({ code: result.code, stderr: oneLine(result.stderr) }).toEqual({
        code: 1,
        stderr: [
          `pnpm start failed: port ${port} on 127.0.0.1 is already in use by pid ${process.pid} (${holderCommand()}) (EADDRINUSE): stop what listens there, or choose another port`,
        ],
      });
      expect(result.stdout).not.toMatch(/running/);
      expect(leftovers(result.pid, dataDir)).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('stops every process with exit code 1 and a message naming the port', async () => {
    const admin = requireEnv('TEST_PG_ADMIN_URL');
    const [gatewayDb, dexDb] = await Promise.all([
      createDatabaseFrom(admin, requireEnv('TEST_GATEWAY_TEMPLATE')),
      createDatabaseFrom(admin, requireEnv('TEST_DEX_TEMPLATE')),
    ]);
    drops.push(gatewayDb.drop, dexDb.drop);
    const common = {
      ...quiet,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      QUEUE_PREFIX: `ports-${randomBytes(4).toString('hex')}`,
      DATA_DIR: `/tmp/pds-test-data/${randomBytes(6).toString('hex')}`,
    };
    const gateway = { ...common, DATABASE_URL: gatewayDb.url, PORT: String(port) };
    // One after the other: started together on a busy machine, their start-up checks of the database
    // (2 s each) time out before any of them reaches its port.
    const free = String(await freePort());
    const runs: (Run & { pid: number })[] = [];
    for (const [entry, env] of [
      ['apps/gateway/src/main.ts', gateway],
      ['apps/gateway/src/main.ts', { ...gateway, GATEWAY_WORKERS: '2' }],
      ['apps/gateway/src/main.ts', { ...gateway, PORT: free, METRICS_PORT: String(port) }],
      ['apps/gateway/src/main.ts', { ...gateway, PORT: free, ADMIN_PORT: String(port), ADMIN_TOKEN: randomBytes(32).toString('hex') }],
      ['apps/dex/src/main.ts', { ...common, DEX_DATABASE_URL: dexDb.url, DEX_PORT: String(port) }],
      ['apps/gateway/src/worker-main.ts', { ...gateway, METRICS_PORT: String(port) }],
    ] as const) {
      runs.push(await run(entry, env));
    }
    const taken = `port ${port} on 127.0.0.1 is already in use by pid ${process.pid} (${holderCommand()}) (EADDRINUSE)`;
    for (const [i, result] of runs.entries()) {
      expect({ i, code: result.code, lines: oneLine(result.stderr).length, stderr: result.stderr }).toEqual({
        i,
        code: 1,
        lines: 1,
        stderr: expect.stringContaining(taken),
      });
      expect(leftovers(result.pid, common.DATA_DIR)).toEqual([]);
    }
    // The lines that used to claim otherwise.
    expect(runs.map((r) => r.stdout).join('')).not.toMatch(/listening|running/);
  });
});

describe('pnpm start a second time on the same DATA_DIR', () => {
  it('says that one is running and changes nothing of it', async () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'pds-second-start-'));
    // Run as root, embedded PostgreSQL runs as the postgres user, who must reach DATA_DIR inside.
    chmodSync(folder, 0o755);
    const [port, dexPort] = [await freePort(), await freePort()];
    const env = {
      ...quiet,
      DATA_DIR: path.join(folder, 'data'),
      PORT: String(port),
      DEX_PORT: String(dexPort),
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      ADMIN_PASSWORD: randomBytes(12).toString('hex'),
    };
    const first = spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', 'scripts/start.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise<number | null>((resolve) => first.once('exit', resolve));
    let banner = '';
    try {
      await new Promise<void>((resolve, reject) => {
        first.stdout.on('data', (chunk: Buffer) => {
          banner += chunk.toString();
          if (banner.includes('PDS cluster running')) resolve();
        });
        void exited.then((code) => reject(new Error(`the first pnpm start exited with ${code}`)));
      });
      const files = () =>
        readdirSync(env.DATA_DIR)
          .filter((name) => statSync(path.join(env.DATA_DIR, name)).isFile())
          .map((name) => [name, readFileSync(path.join(env.DATA_DIR, name), 'utf8')]);
      const before = files();
      // Its Redis state is its own, under a prefix kept with its data.
      const prefix = readFileSync(path.join(env.DATA_DIR, 'queue-prefix'), 'utf8').trim();
      expect(prefix).toMatch(/^pds-[0-9a-f]{8}$/);
      expect(banner).toContain(`(keys under ${prefix}:)`);

      const second = await run('scripts/start.ts', { ...env, PORT: String(await freePort()), DEX_PORT: String(await freePort()) });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`pnpm start failed: a pnpm start is already running on ${env.DATA_DIR} (pid ${first.pid})`);
      expect(files()).toEqual(before);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

      first.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(files().map(([name]) => name)).not.toContain('start.pid');
    } finally {
      // Gracefully even when the test failed: SIGKILL would leave its embedded PostgreSQL running.
      if (first.exitCode === null) {
        first.kill('SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
        first.kill('SIGKILL');
      }
      await dropQueuePrefix(env.DATA_DIR, env.REDIS_URL);
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

/** One HTTP call to 127.0.0.1:`port` with the Host `host` (instance addresses resolve nowhere here). */
function ask(port: number, host: string, route: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: route, method: init.method ?? 'GET', headers: { Host: host, ...init.headers } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

describe('Ctrl-C right after a read', () => {
  it('writes the waiting activity entry before the database stops: it is in the log after a restart', async () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'pds-ctrl-c-'));
    chmodSync(folder, 0o755);
    const [port, dexPort] = [await freePort(), await freePort()];
    const env = {
      ...quiet,
      LOG_LEVEL: 'info',
      DATA_DIR: path.join(folder, 'data'),
      PORT: String(port),
      DEX_PORT: String(dexPort),
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      ADMIN_PASSWORD: randomBytes(12).toString('hex'),
    };
    const alice = `alice.pds.localhost:${port}`;
    const pass = 'correct-horse-battery-staple';
    const logIn = () => ask(port, alice, '/users/access_token', { headers: { username: 'alice', password: pass } });
    /** `pnpm start` in a session of its own, as a terminal runs it; resolves once it is up. */
    const start = async () => {
      const child = spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', 'scripts/start.ts'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      await new Promise<void>((resolve, reject) => {
        const timer = setInterval(() => {
          if (!output.includes('PDS cluster running')) return;
          clearInterval(timer);
          resolve();
        }, 100);
        void exited.then((code) => {
          clearInterval(timer);
          reject(new Error(`pnpm start exited with ${code}: ${output}`));
        });
      });
      return { child, exited, output: () => output };
    };
    const runs: Awaited<ReturnType<typeof start>>[] = [];
    try {
      const first = await start();
      runs.push(first);
      const signedUp = await ask(port, `pds.localhost:${port}`, '/api/signup', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ fullName: 'Alice Example', username: 'alice', email: 'alice@example.com', pass, passRepeat: pass }),
      });
      expect(signedUp.status).toBe(201);
      expect((await logIn()).status).toBe(200);
      // Ctrl-C: the terminal signals the whole process group, at once (the read waits for the next second).
      process.kill(-(first.child.pid as number), 'SIGINT');
      expect(await first.exited).toBe(0);
      expect(first.output()).not.toMatch(/writing reads failed/);

      const second = await start();
      runs.push(second);
      const { body } = await logIn();
      const token = (body as { accessToken: string }).accessToken;
      // The second log-in is written within a second too; then both are there.
      const logins = async () => {
        const activity = await ask(port, alice, '/api/v2.6/activity?type=login', { headers: { 'X-Auth-Token': token } });
        return (activity.body as { type: string }[]).length;
      };
      await eventually(async () => ((await logins()) === 2 ? true : undefined));
      process.kill(-(second.child.pid as number), 'SIGTERM');
      expect(await second.exited).toBe(0);
      expect(leftovers(second.child.pid as number, env.DATA_DIR)).toEqual([]);
    } finally {
      for (const { child, exited } of runs) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        process.kill(-(child.pid as number), 'SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
      }
      await dropQueuePrefix(env.DATA_DIR, env.REDIS_URL);
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
