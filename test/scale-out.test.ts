// The cluster as production runs it: compiled bundles started with `node` from a directory that holds
// only them and the migrations (no node_modules, tsx, TypeScript or jest), as separate processes on
// one PostgreSQL and Redis: two gateways, dex, and each domain's worker.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { dropDatabase, ensureDatabase } from '../scripts/lib/postgres';
import { freePort } from '../scripts/lib/ports';
import { eventually } from './support/dex';
import { CLUSTER, requireEnv, STRONG_PASSWORD } from './support/gateway';
import { REDIS_KINDS } from './support/private-services';

const root = path.resolve(__dirname, '..');
const LOGIN_RATE_LIMIT = 4;

interface Proc {
  name: string;
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

let dir: string;
let env: Record<string, string>;
const databases: string[] = [];
const procs: Proc[] = [];
let gatewayA: string;
let gatewayB: string;
let dexUrl: string;
let workerMetrics: string;

/** Runs a bundle with node alone: PATH and the cluster's variables, nothing from this test's environment. */
function run(name: string, script: string, extra: Record<string, string> = {}): Proc {
  const child = spawn(process.execPath, [script], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (d: Buffer) => output.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => output.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const proc = { name, child, output, exited };
  procs.push(proc);
  return proc;
}

/** The URL a process logged as listening on: ports are chosen by the OS, so no other test can take them first. */
async function listening(proc: Proc): Promise<string> {
  return eventually(async () => /"url":"(http:\/\/[^"]+)"[^\n]*listening/.exec(proc.output.join(''))?.[1], 60_000);
}

async function ready(url: string, path = '/readyz') {
  // Generous: on a loaded machine five node processes take a while to start.
  await eventually(async () => (await fetch(url + path).catch(() => undefined))?.status === 200, 60_000);
}

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'pds-scale-out-'));
  execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs'), '--out', dir], { stdio: 'pipe' });
  cpSync(path.join(root, 'prisma'), path.join(dir, 'prisma'), { recursive: true, filter: (src) => !src.endsWith('.ts') });
  expect(existsSync(path.join(dir, 'node_modules'))).toBe(false);
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The Redis each run of the suite is on: the suite's own server, and a private Redis Cluster. */
const redisKinds: Array<[string, () => Promise<{ env: Record<string, string>; destroy(): Promise<void> }>]> = [
  ['one Redis server', async () => ({ env: { REDIS_URL: requireEnv('TEST_REDIS_URL') }, destroy: async () => undefined })],
  ['a Redis Cluster', REDIS_KINDS['a Redis Cluster']],
];

describe.each(redisKinds)('on %s', (_kind, startRedis) => {
  let redis: Awaited<ReturnType<typeof startRedis>>;

  beforeAll(async () => {
    redis = await startRedis();
    const admin = requireEnv('TEST_PG_ADMIN_URL');
    const suffix = randomBytes(4).toString('hex');
    databases.push(`pds_scale_${suffix}`, `pds_scale_${suffix}_dex`);
    const databaseUrl = await ensureDatabase(admin, `pds_scale_${suffix}`);
    await ensureDatabase(admin, `pds_scale_${suffix}_dex`);
    const metricsPort = await freePort();
    workerMetrics = `http://127.0.0.1:${metricsPort}`;
    env = {
      // DEX_DATABASE_URL is left to its default: <DATABASE_URL's database>_dex.
      DATABASE_URL: databaseUrl,
      ...redis.env,
      MASTER_KEY: randomBytes(32).toString('hex'),
      QUEUE_PREFIX: `test-scale-${suffix}`,
      CLUSTER_DOMAIN: CLUSTER,
      PUBLIC_URL_SCHEME: 'http',
      DATA_DIR: path.join(dir, 'data'),
      DEX_PORT: '0',
      PORT: '0',
      DEX_ADMINS: `boss.${CLUSTER}`,
      LOGIN_RATE_LIMIT: String(LOGIN_RATE_LIMIT),
      // info: the 'listening' line names the port each process got.
      LOG_LEVEL: 'info',
    };
    // Migrations first, with the compiled runner, as a deployment's migration step does.
    for (const app of ['gateway', 'dex']) {
      const migrate = run(`${app} migrate`, `apps/${app}/dist/migrate.js`);
      expect(await migrate.exited).toBe(0);
    }
    dexUrl = await listening(run('dex', 'apps/dex/dist/main.js'));
    env.DEX_URL = dexUrl;
    [gatewayA, gatewayB] = await Promise.all([
      listening(run('gateway A', 'apps/gateway/dist/main.js')),
      listening(run('gateway B', 'apps/gateway/dist/main.js')),
    ]);
    // Dex's worker reaches the instances through gateway A.
    env.CLUSTER_GATEWAYS = `${CLUSTER}=${gatewayA}`;
    run('gateway worker', 'apps/gateway/dist/worker.js', { METRICS_PORT: String(metricsPort) });
    run('dex worker', 'apps/dex/dist/worker.js');
    await Promise.all([ready(dexUrl), ready(gatewayA), ready(gatewayB), ready(workerMetrics, '/healthz')]);
  }, 240_000);

  afterAll(async () => {
    // A process that died early says why here.
    for (const p of procs)
      if (p.child.exitCode !== null && p.child.exitCode !== 0) console.error(`${p.name} exited ${p.child.exitCode}:\n${p.output.join('')}`);
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    for (const name of databases.splice(0)) await dropDatabase(requireEnv('TEST_PG_ADMIN_URL'), name);
    procs.splice(0);
    await redis?.destroy();
  });

  const signUp = async (username: string) => {
    const res = await request(gatewayA)
      .post('/api/signup')
      .set('Host', CLUSTER)
      .send({ fullName: username, username, email: `${username}@example.com`, pass: STRONG_PASSWORD, passRepeat: STRONG_PASSWORD });
    expect(res.status).toBe(201);
    return { address: res.body.instance as string, token: res.body.accessToken as string };
  };
  const as = (base: string, host: string, token: string) => ({
    get: (p: string) => request(base).get(p).set('Host', host).set('X-Auth-Token', token),
    post: (p: string) => request(base).post(p).set('Host', host).set('X-Auth-Token', token),
    put: (p: string) => request(base).put(p).set('Host', host).set('X-Auth-Token', token),
  });

  it('serves the web console from the bundle (its build copied beside it)', async () => {
    const res = await request(gatewayB).get('/').set('Host', CLUSTER).set('Accept', 'text/html');
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/);
    const script = /src="(\/assets\/signup-[^"]+\.js)"/.exec(res.text)?.[1] ?? '';
    expect((await request(gatewayB).get(script).set('Host', CLUSTER)).status).toBe(200);
  });

  it('accepts on gateway B a token that gateway A issued', async () => {
    const alice = await signUp('alice');
    const res = await as(gatewayB, alice.address, alice.token).get('/users/access_token/validate');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Authenticated' });
  });

  it('completes on B an upload started on A, and serves it on A', async () => {
    const carol = await signUp('carol');
    const onA = as(gatewayA, carol.address, carol.token);
    const onB = as(gatewayB, carol.address, carol.token);
    const started = await onA.post('/api/v2.6/files/upload').send({ name: 'scale.txt', source: 'test' }).expect(200);
    const target = new URL(started.body.contentUrl as string);
    await request(gatewayB)
      .put(target.pathname + target.search)
      .set('Host', carol.address)
      .set('x-amz-server-side-encryption', 'AES256')
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('bytes across gateways'))
      .expect(200);
    const completed = await onB.put(`/api/v2.6/files/file/${started.body.fileId}/complete`).expect(200);
    expect(completed.body).toMatchObject({ status: { status: 'Completed', size: 21 } });
    const redirect = await onA.get(`/api/v2.6/files/content/${started.body.fileId}`).expect(303);
    const content = new URL(redirect.headers.location as string);
    const bytes = await request(gatewayA)
      .get(content.pathname + content.search)
      .set('Host', carol.address)
      .expect(200);
    expect(Buffer.from(bytes.body as Buffer).toString()).toBe('bytes across gateways');
  });

  it('shares the login rate limit between gateways', async () => {
    const dave = await signUp('dave');
    const attempt = (base: string) =>
      request(base).get('/users/access_token').set('Host', dave.address).set('username', 'dave').set('password', 'wrong-password');
    for (let i = 0; i < LOGIN_RATE_LIMIT; i++) expect((await attempt(i % 2 === 0 ? gatewayA : gatewayB)).status).toBe(401);
    const refused = await attempt(gatewayB);
    expect(refused.status).toBe(429);
    expect((await attempt(gatewayA)).status).toBe(429);
  });

  it('refuses on B, within 1 s, a user that the owner disabled on A', async () => {
    const erin = await signUp('erin');
    const created = await as(gatewayA, erin.address, erin.token)
      .post('/users/user')
      .send({ username: 'frank', password: STRONG_PASSWORD })
      .expect(201);
    const login = await request(gatewayB)
      .get('/users/access_token')
      .set('Host', erin.address)
      .set('username', 'frank')
      .set('password', STRONG_PASSWORD)
      .expect(200);
    const frankOnB = as(gatewayB, erin.address, login.body.accessToken as string);
    await frankOnB.get('/users/access_token/validate').expect(200);
    await as(gatewayA, erin.address, erin.token).put(`/users/user/${created.body.userId}/disable`).expect(200);
    const disabledAt = Date.now();
    await eventually(async () => (await frankOnB.get('/users/access_token/validate')).status === 401, 1000);
    expect(Date.now() - disabledAt).toBeLessThanOrEqual(1000);
  });

  it('delivers an app pushed through dex to instances on both gateways', async () => {
    const boss = await signUp('boss');
    const gina = await signUp('gina');
    // Each sign-up is registered with dex by the gateway worker, whose key the dex worker fetches.
    for (const who of [boss, gina]) {
      await eventually(
        async () => (await request(dexUrl).post('/api/users/registerHat').send({ hatAddress: who.address })).status === 200,
        20_000,
      );
    }
    const pushed = await request(dexUrl)
      .post('/api/users/update-application')
      .query({ hatFilter: '*', cluster: CLUSTER })
      .set('x-auth-token', boss.token)
      .send({ title: 'Scale', namespace: 'scale', logoUrl: 'https://s.example/l.png', url: 'https://s.example', category: 'app' });
    expect(pushed.status).toBe(202);
    for (const [base, who] of [
      [gatewayA, gina],
      [gatewayB, gina],
      [gatewayB, boss],
    ] as const) {
      const apps = await eventually(async () => {
        const res = await as(base, who.address, who.token).get('/api/v2.6/applications');
        return res.status === 200 && (res.body as { application: { id: string } }[]).some((a) => a.application.id === 'scale')
          ? res.body
          : null;
      }, 20_000);
      expect(apps).toBeTruthy();
    }
    // The gateway worker's own metrics count its queues.
    const metrics = await request(workerMetrics).get('/metrics').expect(200);
    const lines = metrics.text.split('\n');
    expect(lines).toContain('queue_jobs{queue="dex-registration",state="failed",process="gateway-worker"} 0');
    // The repeatable upload sweep waits for its next run.
    expect(lines).toContain('queue_jobs{queue="upload-sweep",state="delayed",process="gateway-worker"} 1');
  }, 60_000);

  it('finishes an upload in flight when its gateway is told to stop, then exits 0; every process stops on SIGTERM', async () => {
    const hank = await signUp('hank');
    const started = await as(gatewayA, hank.address, hank.token)
      .post('/api/v2.6/files/upload')
      .send({ name: 'slow.bin', source: 'test' })
      .expect(200);
    const target = new URL(started.body.contentUrl as string);
    const gatewayBProc = procs.find((p) => p.name === 'gateway B') as Proc;
    // Half the body, then SIGTERM, then the rest: the gateway must finish this request before exiting.
    const http = await import('node:http');
    const answer = new Promise<number>((resolve, reject) => {
      const req = http.request(`${gatewayB}${target.pathname}${target.search}`, {
        method: 'PUT',
        headers: {
          Host: hank.address,
          'x-amz-server-side-encryption': 'AES256',
          'Content-Type': 'application/octet-stream',
          'Content-Length': '8',
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('half');
      setTimeout(() => {
        gatewayBProc.child.kill('SIGTERM');
        setTimeout(() => req.end('rest'), 300);
      }, 200);
    });
    expect(await answer).toBe(200);
    expect(await gatewayBProc.exited).toBe(0);
    await as(gatewayA, hank.address, hank.token).put(`/api/v2.6/files/file/${started.body.fileId}/complete`).expect(200);

    const others = procs.filter((p) => p.child.exitCode === null);
    for (const p of others) p.child.kill('SIGTERM');
    const codes = await Promise.all(others.map((p) => p.exited));
    expect(Object.fromEntries(others.map((p, i) => [p.name, codes[i]]))).toEqual(Object.fromEntries(others.map((p) => [p.name, 0])));
  }, 30_000);
});
