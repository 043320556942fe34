// GATEWAY_WORKERS=2: the gateway as a real process tree (a primary and two workers sharing one port).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import request from 'supertest';
import { freePort } from '../../../scripts/lib/ports';
import { CLUSTER, requireEnv, STRONG_PASSWORD } from '../../../test/support/gateway';
import { createDatabaseFrom } from '../../../test/support/templates';

const ROOT = path.resolve(__dirname, '../../..');
let primary: ChildProcess;
let base: string;
let metricsUrl: string;
let dropDatabase: () => Promise<void>;

/** Worker process ids under the primary (not its esbuild helper). */
function workerPids(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(primary.pid), '-f', 'gateway/src/main'])
      .toString()
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

async function until<T>(read: () => T, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms (last: ${JSON.stringify(value)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  const database = await createDatabaseFrom(requireEnv('TEST_PG_ADMIN_URL'), requireEnv('TEST_GATEWAY_TEMPLATE'));
  dropDatabase = database.drop;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  primary = spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', 'apps/gateway/src/main.ts'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      GATEWAY_WORKERS: '2',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      CLUSTER_DOMAIN: CLUSTER,
      DATABASE_URL: database.url,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      QUEUE_PREFIX: `test-${randomBytes(6).toString('hex')}`,
      MASTER_KEY: randomBytes(32).toString('hex'),
      DATA_DIR: `/tmp/pds-test-data/${randomBytes(6).toString('hex')}`,
      LOG_LEVEL: 'info',
    },
  });
  // Both workers log when they listen; generous, as each compiles the gateway through tsx.
  let listening = 0;
  let output = '';
  primary.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const lines = output.split('\n');
    output = lines.pop() ?? '';
    listening += lines.filter((line) => line.includes('"msg":"gateway listening"')).length;
  });
  await until(
    () => listening,
    (n) => n >= 2,
    100_000,
  );
  expect(workerPids()).toHaveLength(2);
}, 120_000);

afterAll(async () => {
  if (primary.exitCode === null) primary.kill('SIGKILL');
  for (const pid of workerPids()) process.kill(pid, 'SIGKILL');
  await dropDatabase();
});

describe('GATEWAY_WORKERS=2', () => {
  it('serves from two processes, and the login rate limit holds across them', async () => {
    const signup = await request(base)
      .post('/api/signup')
      .set('Host', CLUSTER)
      .send({ fullName: 'Carol', username: 'carol', email: 'carol@example.com', pass: STRONG_PASSWORD, passRepeat: STRONG_PASSWORD });
    expect(signup.status).toBe(201);
    const host = `carol.${CLUSTER}`;
    // Connections are dealt round-robin, so these eleven attempts reach both workers; the limit is 10 a minute.
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await request(base)
        .get('/users/access_token')
        .set('Host', host)
        .set('username', 'carol')
        .set('password', 'wrong-password');
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
  });

  it("serves both workers' metrics summed on METRICS_PORT", async () => {
    // Each worker answered about half of the eleven logins above; a single worker's counters would show fewer.
    const text = await (await fetch(metricsUrl)).text();
    const logins = text
      .split('\n')
      .filter((line) => line.startsWith('http_request_duration_seconds_count{') && line.includes('route="/users/access_token"'))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    expect(logins).toBe(11);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes\{[^}]*\} \d+/m);
  });

  it('restarts a worker that dies', async () => {
    const [victim, survivor] = workerPids();
    process.kill(victim as number, 'SIGKILL');
    const pids = await until(workerPids, (p) => p.length === 2 && !p.includes(victim as number), 40_000);
    expect(pids).toContain(survivor);
    // The port answers again once a worker listens (the killed one may have been the only one so far).
    const answered = async () => {
      const deadline = Date.now() + 40_000;
      for (;;) {
        try {
          return (await request(base).get('/').set('Host', `nobody.${CLUSTER}`).timeout(10_000)).status;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };
    expect(await answered()).toBe(404);
  }, 60_000);

  it('stops gracefully on SIGTERM: the primary exits 0 and takes its workers along', async () => {
    const workers = workerPids();
    const exited = new Promise<number | null>((resolve) => primary.once('exit', (code) => resolve(code)));
    primary.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
  });
});
