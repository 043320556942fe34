// How the processes start when they cannot: without configuration, on a port something else holds, and
// `pnpm start` a second time on the same DATA_DIR. Each is a real process, as an operator would start it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../scripts/lib/ports';
import { requireEnv } from './support/gateway';
import { createDatabaseFrom } from './support/templates';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry point as `pnpm dev` would, until it exits (or is killed after `timeoutMs`). */
function run(entry: string, env: Record<string, string>, timeoutMs = 120_000): Promise<Run> {
  const child = spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const quiet = { LOG_LEVEL: 'warn', MASTER_KEY: randomBytes(32).toString('hex') };

describe('a process without its configuration', () => {
  it('prints one line naming every missing variable, and exits 1', async () => {
    const [gateway, worker] = await Promise.all([run('apps/gateway/src/main.ts', {}), run('apps/dex/src/worker-main.ts', {})]);
    expect(gateway).toEqual({
      code: 1,
      stdout: '',
      stderr: 'Invalid configuration: DATABASE_URL: is required; REDIS_URL: is required; MASTER_KEY: is required\n',
    });
    expect(worker).toEqual({
      code: 1,
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
    const runs: Run[] = [];
    for (const [entry, env] of [
      ['apps/gateway/src/main.ts', gateway],
      ['apps/gateway/src/main.ts', { ...gateway, GATEWAY_WORKERS: '2' }],
      ['apps/dex/src/main.ts', { ...common, DEX_DATABASE_URL: dexDb.url, DEX_PORT: String(port) }],
      ['apps/gateway/src/worker-main.ts', { ...gateway, METRICS_PORT: String(port) }],
    ] as const) {
      runs.push(await run(entry, env));
    }
    for (const [i, result] of runs.entries()) {
      expect({ i, code: result.code, stderr: result.stderr }).toEqual({
        i,
        code: 1,
        stderr: expect.stringContaining(`port ${port} on 127.0.0.1 is already in use`),
      });
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
      const prefixFile = path.join(env.DATA_DIR, 'queue-prefix');
      if (existsSync(prefixFile)) {
        const redis = new Redis(env.REDIS_URL);
        const match = `${readFileSync(prefixFile, 'utf8').trim()}:*`;
        for await (const keys of redis.scanStream({ match })) if ((keys as string[]).length) await redis.del(...(keys as string[]));
        redis.disconnect();
      }
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
