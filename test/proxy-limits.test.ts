// The gateway behind nginx configured as infra/compose ships it (scripts/lib/nginx.ts makes it from
// the same files), with compose's TRUST_PROXY (1: one proxy in front): whatever X-Forwarded-For a client writes, the address
// nginx saw is the one every limit counts and every log shows. Each client here is a source address
// of its own on the loopback network (test/support/from-address.ts), as nginx sees it. And the setting
// that believed any X-Forwarded-For, TRUST_PROXY=true, stops a process at start.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { createLogger } from '@pds/runtime';
import { startNginx, type RunningNginx } from '../scripts/lib/nginx';
import { freePort } from '../scripts/lib/ports';
import { loadCompose, parseEnvFile } from './support/compose';
import { eventually } from './support/eventually';
import { requestFrom, type Answer } from './support/from-address';
import { CLUSTER, signUp, startTestGateway, STRONG_PASSWORD, type SignedUp, type TestGateway } from './support/gateway';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '..');
/** The contract's limits: 10 log-ins a minute per client and instance; 20 failures per account per hour. */
const PER_ADDRESS = 10;
const PER_ACCOUNT = 20;

/** TRUST_PROXY as infra/compose gives it to the gateways. */
function shippedTrust(): string {
  const compose = path.join(ROOT, 'infra', 'compose');
  // Secrets are left empty in the example; any value does for reading the file.
  const example = parseEnvFile(path.join(compose, '.env.example'));
  const env = Object.fromEntries(Object.entries(example).map(([name, value]) => [name, value || 'example']));
  const gateway = loadCompose(path.join(compose, 'compose.yaml'), env).services['gateway-1'] as { environment: Record<string, string> };
  return gateway.environment.TRUST_PROXY!;
}

let gw: TestGateway;
let server: http.Server;
let nginx: RunningNginx;
let proxied: number;
let workDir: string;
let alice: SignedUp;
let bob: SignedUp;
/** The gateway's log lines, as JSON. */
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), 'proxy-limits-'));
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  gw = await startTestGateway(
    { TRUST_PROXY: shippedTrust(), LOGIN_RATE_LIMIT: String(PER_ADDRESS), LOGIN_ACCOUNT_LIMIT: String(PER_ACCOUNT) },
    { logger: createLogger({ level: 'info', destination }) },
  );
  server = http.createServer(gw.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const upstream = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxied = await freePort();
  nginx = await startNginx({
    dir: path.join(workDir, 'nginx'),
    vars: { CLUSTER_DOMAIN: CLUSTER },
    // Only the gateways are called here; dex and the store lead nowhere in particular.
    servers: { 'gateway-1:8080': upstream, 'gateway-2:8080': upstream, 'dex:8081': upstream, 's3:8333': upstream },
    listen: { 80: proxied, 8080: await freePort() },
  });
  [alice, bob] = [await signUp(gw.app, 'alice'), await signUp(gw.app, 'bob')];
});

afterAll(async () => {
  await nginx?.stop();
  await new Promise((resolve) => server?.close(resolve));
  await gw?.close();
  rmSync(workDir, { recursive: true, force: true });
});

/** A log-in through nginx from `from`, with the X-Forwarded-For the client writes itself (if any). */
const login = (from: string, who: SignedUp, password: string, forwardedFor?: string) =>
  requestFrom(from, proxied, {
    path: '/users/access_token',
    headers: {
      Host: who.address,
      username: who.username,
      password,
      ...(forwardedFor ? { 'X-Forwarded-For': forwardedFor } : {}),
    },
  });

const statusesOf = (answers: Answer[]) => answers.map((a) => a.status);
const times = <T>(n: number, each: (i: number) => Promise<T>) =>
  Array.from({ length: n }).reduce<Promise<T[]>>(async (done, _, i) => [...(await done), await each(i)], Promise.resolve([]));

describe('through nginx as infra/compose ships it (TRUST_PROXY=1)', () => {
  const limited = [...Array<number>(PER_ADDRESS).fill(401), 429, 429, 429];

  it('limits a client that rotates X-Forwarded-For exactly like one that does not: 13 wrong passwords, the last 3 refused', async () => {
    const plain = await times(13, () => login('127.0.0.2', alice, 'wrong-password'));
    // A new address in X-Forwarded-For on every try, as a guesser would write it.
    const rotating = await times(13, (i) => login('127.0.0.3', alice, 'wrong-password', `203.0.113.${i + 1}`));
    expect(statusesOf(plain)).toEqual(limited);
    expect(statusesOf(rotating)).toEqual(limited);
    const refused = rotating[PER_ADDRESS]!;
    expect(refused.body).toEqual({ error: 'Too Many Requests', message: expect.stringMatching(/^Too many requests; retry after \d+ s$/) });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
  });

  it('names the real client in the access log and in the owner’s activity log, never the address it wrote', async () => {
    const access = await eventually(async () => {
      const found = lines.filter((l) => l.msg === 'request' && l.path === '/users/access_token');
      return found.length >= 26 ? found : undefined;
    });
    expect(new Set(access.map((l) => l.ip))).toEqual(new Set(['127.0.0.2', '127.0.0.3']));
    const activity = await eventually(async () => {
      const res = await requestFrom('127.0.0.1', proxied, {
        path: '/api/v2.6/activity?type=login.failed',
        headers: { Host: alice.address, 'X-Auth-Token': alice.token },
      });
      // Repeats of one read in a moment are one entry, `times` over.
      const entries = res.body as { address: string; times: number }[];
      return entries.reduce((sum, e) => sum + e.times, 0) >= 2 * PER_ADDRESS ? entries : undefined;
    });
    expect(new Set(activity.map((e) => e.address))).toEqual(new Set(['127.0.0.2', '127.0.0.3']));
    expect(JSON.stringify(activity)).not.toContain('203.0.113.');
  });

  it(
    `slows a guessing spread over 20 addresses: past ${PER_ACCOUNT} failures of the account, each address that failed gets 429, ` +
      'while the owner’s right password from a fresh address logs in',
    async () => {
      const addresses = Array.from({ length: 20 }, (_, i) => `127.0.1.${i + 1}`);
      // One wrong password from each: 20 failures, no address near its own limit of 10.
      const first = await Promise.all(addresses.map((from) => login(from, bob, 'wrong-password')));
      expect(statusesOf(first)).toEqual(addresses.map(() => 401));
      // A second round: without a count per account, 20 more guesses (and 8 more rounds after it).
      const second = await Promise.all(addresses.map((from) => login(from, bob, 'wrong-password')));
      expect(statusesOf(second)).toEqual(addresses.map(() => 429));
      for (const answer of second) {
        expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
        expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(3600);
      }
      // Refused before the password is looked at: the right one from an address that failed is refused too.
      expect((await login(addresses[0]!, bob, STRONG_PASSWORD)).status).toBe(429);
      // The owner, from an address with no failure, logs in.
      const owner = await login('127.0.2.1', bob, STRONG_PASSWORD);
      expect(owner.status).toBe(200);
      expect(owner.body).toEqual({ accessToken: expect.any(String), userId: bob.userId });
      // So does a guesser from a fresh address get its one try, and no second.
      expect((await login('127.0.2.2', bob, 'wrong-password')).status).toBe(401);
      expect((await login('127.0.2.2', bob, 'wrong-password')).status).toBe(429);
    },
  );
});

describe('TRUST_PROXY=true', () => {
  const run = promisify(execFile);
  const start = (entry: string) =>
    run(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', entry], {
      cwd: ROOT,
      timeout: 60_000,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        TRUST_PROXY: 'true',
        // Nothing is reached: the configuration stops the process first.
        DATABASE_URL: 'postgres://pds@127.0.0.1:1/pds',
        REDIS_URL: 'redis://127.0.0.1:1',
        MASTER_KEY: randomBytes(32).toString('hex'),
      },
    }).then(
      (out) => ({ code: 0, ...out }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );

  it('stops the gateway and dex at start with one line saying why', async () => {
    const said =
      'Invalid configuration: TRUST_PROXY: "true" is refused: it believes X-Forwarded-For from any peer, so any client could ' +
      'write its own address there and escape every per-address limit. Name your proxies instead: how many stand in front of ' +
      'this process (TRUST_PROXY=1 for one proxy) or their addresses (TRUST_PROXY=10.0.0.0/8,fd00::/8)\n';
    const [gateway, dex] = await Promise.all([start('apps/gateway/src/main.ts'), start('apps/dex/src/main.ts')]);
    expect(gateway).toEqual({ code: 1, stdout: '', stderr: said });
    expect(dex).toEqual({ code: 1, stdout: '', stderr: said });
  });
});
