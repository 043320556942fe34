// Property-based fuzzing of every gateway and dex endpoint (issue 12). The routes are read from the
// express apps themselves, so an endpoint added later is fuzzed without touching this file. Each
// generated request mixes hostile path parameters, query strings, headers and bodies (broken
// percent-encoding, NUL, lone surrogates, deep and huge JSON, corrupt compression, wrong types, huge
// headers) and must get: no 5xx, every failure in the `{ error, message }` model, and no database
// change when refused. Seeded and bounded: FUZZ_SEED and FUZZ_RUNS reproduce or widen a run.
import http from 'node:http';
import zlib from 'node:zlib';
import { pathsOf, type AnyRoute } from '@pds/http';
import fc from 'fast-check';
import pg from 'pg';
import supertest from 'supertest';
import { startTestCluster, type TestCluster } from './support/dex';
import { addUser, CLUSTER, signUp, type SignedUp } from './support/gateway';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

jest.setTimeout(120_000);

interface Route {
  method: string;
  path: string;
}

/** Every route of a table, each path of it. */
function routesOf(routes: readonly AnyRoute[]): Route[] {
  return routes.flatMap((route) => pathsOf(route).map((path) => ({ method: route.method.toUpperCase(), path })));
}

// --- generators -------------------------------------------------------------------------------

const LONE = ['\ud800', '\udfff', 'a\ud83dz'];
const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u0000', 'a\u0000b', ...LONE, '', ' ', '../..', '%', '\\', '"', 'null', '0', '-1', '1e999', 'x'.repeat(5000)),
  fc.tuple(fc.string({ maxLength: 8 }), fc.constantFrom('\u0000', ...LONE)).map(([a, b]) => a + b),
);

/** Percent-encoded text with deliberately broken and dangerous sequences mixed in. */
const urlText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }).map(encodeURIComponent),
  fc.constantFrom('%zz', '%u002e', '%E0%A4%A', '%00', 'a%00b', '%ED%A0%80', '%C0%AE', '%', '%%', '%2e%2e', '%2F', 'x'.repeat(3000)),
);

const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, nasty, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(nasty, tie('value'), { maxKeys: 5 }),
})).value;

type Body = { bytes: Buffer; type?: string; encoding?: string };
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value) ?? 'null');
const body: fc.Arbitrary<Body | undefined> = fc.oneof(
  fc.constant(undefined),
  jsonValue.map((v) => ({ bytes: json(v), type: 'application/json' })),
  // Plausible records with one hostile field: they get past shape checks and reach the services.
  fc
    .record(
      {
        name: nasty,
        source: nasty,
        title: nasty,
        tags: fc.array(nasty, { maxLength: 3 }),
        hatAddress: nasty,
        username: nasty,
        pass: nasty,
      },
      { requiredKeys: [] },
    )
    .map((v) => ({ bytes: json(v), type: 'application/json' })),
  fc.integer({ min: 65, max: 120_000 }).map((d) => ({ bytes: Buffer.from('['.repeat(d) + ']'.repeat(d)), type: 'application/json' })),
  fc.constant({ bytes: Buffer.from(`{"a":"${'x'.repeat(1024 * 1024 + 10)}"}`), type: 'application/json' }),
  fc.uint8Array({ maxLength: 200 }).map((b) => ({ bytes: Buffer.from(b), type: 'application/json' })),
  fc
    .tuple(fc.constantFrom('gzip', 'br', 'deflate', 'x-gzip', 'compress', 'gzip, br', 'identity'), fc.uint8Array({ maxLength: 100 }))
    .map(([encoding, b]) => ({
      bytes: Buffer.from(b),
      type: 'application/json',
      encoding,
    })),
  fc.constantFrom('gzip', 'br').map((encoding) => {
    const zipped =
      encoding === 'gzip' ? zlib.gzipSync(json({ name: 'x'.repeat(4000) })) : zlib.brotliCompressSync(json({ name: 'x'.repeat(4000) }));
    return { bytes: zipped.subarray(0, zipped.length >> 1), type: 'application/json', encoding };
  }),
  fc.constant({ bytes: zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20)), type: 'application/json', encoding: 'gzip' }),
  fc
    .tuple(
      fc.constantFrom('text/plain', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', 'application/vnd.x+json'),
      fc.string({ maxLength: 50 }),
    )
    .map(([type, text]) => ({ bytes: Buffer.from(text), type })),
);

const headerValue = fc.oneof(
  { arbitrary: urlText, weight: 6 },
  { arbitrary: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => /^[\x21-\x7e]+$/.test(s)), weight: 6 },
  // Over Node's 16 KiB header limit: the parser's own refusal must be in the error model too.
  { arbitrary: fc.constant('a'.repeat(20_000)), weight: 1 },
);
const headers = fc.dictionary(
  fc.constantFrom('username', 'password', 'pass', 'x-auth-token', 'x-request-id', 'x-forwarded-host', 'accept', 'x-custom'),
  headerValue,
  { maxKeys: 3 },
);
const query = fc.array(
  fc.tuple(
    fc.constantFrom(
      'username',
      'pass',
      'password',
      'access_token',
      'take',
      'skip',
      'orderBy',
      'ordering',
      'content',
      'hatFilter',
      'cluster',
      'x-auth-token',
      'q[a]',
    ),
    urlText,
  ),
  { maxLength: 3 },
);

// --- the test -----------------------------------------------------------------------------------

let cluster: TestCluster;
let owner: SignedUp;
let gatewayDb: pg.Client;
let dexDb: pg.Client;
const knownValues: string[] = [];

/** A fingerprint of every table: any insert, update or delete changes it. */
async function snapshot(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ table_name: string }>(
    // The read log is not state a refusal may change: it is written a second later by earlier requests
    // (batched), and a refused log-in is itself recorded there on purpose.
    `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'
       and table_name not in ('_prisma_migrations', 'ReadActivity', 'EventCounter') order by 1`,
  );
  // Each table named beside its hash, so a failure says which one changed. Event numbers are given after
  // the change, whenever a stream or the worker gets to them: the numbering is no change a refusal made.
  const rowText = (table: string) => (table === 'Event' ? `(t."instanceId", t."id", t."type", t."object")::text` : 't::text');
  const parts = rows.map(
    ({ table_name }) =>
      `${pg.escapeLiteral(`${table_name}:`)} || (select md5(coalesce(string_agg(${rowText(table_name)}, '|' order by ${rowText(table_name)}), '')) from ${pg.escapeIdentifier(table_name)} t)`,
  );
  const {
    rows: [row],
  } = await client.query<{ h: string }>(`select concat_ws(',', ${parts.join(', ')}) as h`);
  return row?.h ?? '';
}

function send(baseUrl: string, method: string, path: string, host: string, extra: Record<string, string>, payload?: Body) {
  const url = new URL(baseUrl);
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const hdrs: Record<string, string> = { Host: host, ...extra };
    if (payload?.type) hdrs['Content-Type'] = payload.type;
    if (payload?.encoding) hdrs['Content-Encoding'] = payload.encoding;
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers: hdrs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    // The server may refuse and close before reading a large body: that is an answer, not a failure.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    req.end(payload?.bytes);
  });
}

function fill(template: string, params: string[]): string {
  let i = 0;
  return template.replace(/[:*]\w+/g, () => params[i++ % params.length] ?? 'x');
}

interface Target {
  name: string;
  baseUrl: string;
  routes: Route[];
  hosts: string[];
  db: () => pg.Client;
}

beforeAll(async () => {
  cluster = await startTestCluster({ worker: false, registerWaitMs: 200 });
  owner = await signUp(cluster.gw.app, 'fuzzowner');
  const other = await addUser(cluster.gw.app, owner, 'fuzzother');
  const upload = await supertest(cluster.gw.app)
    .post('/api/v2.6/files/upload')
    .set('Host', owner.address)
    .set('X-Auth-Token', owner.token)
    .send({ name: 'a.txt', source: 'fuzz' });
  expect(upload.status).toBe(200);
  knownValues.push(owner.userId, other.userId, 'fuzza.txt', 'notes', 'items', owner.address);
  gatewayDb = new pg.Client({ connectionString: cluster.gw.databaseUrl });
  dexDb = new pg.Client({ connectionString: cluster.config.DEX_DATABASE_URL });
  await Promise.all([gatewayDb.connect(), dexDb.connect()]);
});

afterAll(async () => {
  await Promise.all([gatewayDb?.end(), dexDb?.end()]);
  await cluster?.close();
});

it('reads every route from both apps', () => {
  expect(routesOf(cluster.gw.routes)).toEqual(
    expect.arrayContaining([
      { method: 'POST', path: '/api/v2.6/files/search' },
      { method: 'POST', path: '/api/signup' },
    ]),
  );
  expect(routesOf(cluster.dex.routes)).toEqual(expect.arrayContaining([{ method: 'POST', path: '/api/v3/users/registerHat' }]));
});

describe.each(['gateway', 'dex'])('%s under generated hostile input', (name) => {
  it('never answers 5xx, always in the error model, and changes nothing when it refuses', async () => {
    const target: Target =
      name === 'gateway'
        ? {
            name,
            baseUrl: cluster.gatewayUrl,
            routes: routesOf(cluster.gw.routes),
            hosts: [owner.address, CLUSTER, `nobody.${CLUSTER}`],
            db: () => gatewayDb,
          }
        : { name, baseUrl: cluster.dexUrl, routes: routesOf(cluster.dex.routes), hosts: ['127.0.0.1', `dex.${CLUSTER}`], db: () => dexDb };
    const tokens = fc.constantFrom(undefined, owner.token, 'garbage', `${owner.token.slice(0, -4)}AAAA`);
    const request = fc.record({
      route: fc.constantFrom(...target.routes),
      params: fc.array(fc.oneof(urlText, fc.constantFrom(...knownValues.map(encodeURIComponent))), { minLength: 1, maxLength: 3 }),
      query,
      headers,
      token: tokens,
      host: fc.constantFrom(...target.hosts),
      body,
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const search = r.query.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&');
        const path = fill(r.route.path, r.params) + (search ? `?${search}` : '');
        const extra = { ...r.headers, ...(r.token ? { 'x-auth-token': r.token } : {}) };
        const before = await snapshot(target.db());
        const res = await send(target.baseUrl, r.route.method, path, r.host, extra, r.body);
        if (process.env.FUZZ_LOG) process.stdout.write(`${res.status} ${r.route.method} ${r.route.path}\n`);
        const where = `${r.route.method} ${path.slice(0, 200)} → ${res.status} ${res.text.slice(0, 300)}`;
        expect([where, res.status < 500]).toEqual([where, true]);
        if (res.status >= 400 && r.route.method !== 'HEAD') {
          const parsed = JSON.parse(res.text) as Record<string, unknown>;
          expect(typeof parsed.error).toBe('string');
          expect(typeof parsed.message).toBe('string');
          expect([where, await snapshot(target.db())]).toEqual([where, before]);
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});
