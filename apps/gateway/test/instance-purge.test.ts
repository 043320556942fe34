// Erasing a closed instance after its grace period (issue 19), on a real cluster (gateway, dex, both
// workers) and on both stores: no row of any table holds its id, no object is left under its prefix,
// dex has forgotten its key and retired the address, and neither the gateway nor dex takes the name
// again. The purge is idempotent, and a worker killed with SIGKILL mid-purge has it finished by the next.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { createPublicKey } from 'node:crypto';
import pg from 'pg';
import request from 'supertest';
import { loadConfigFor } from '@pds/config';
import { EventRepository, InstanceErasureRepository } from '@pds/db';
import { startGatewayWorker } from '@pds/gateway';
import { createLogger, type Stoppable } from '@pds/runtime';
import type { BlobStore } from '@pds/storage';
import { DEX_ISSUER, generateRsaKeyPair, issueServiceToken, RETIRE_SCOPE, signingKeys, verifyServiceToken } from '@pds/tokens';
import { eventually, startTestCluster, type TestCluster } from '../../../test/support/dex';
import {
  CLUSTER,
  requireEnv,
  signUp,
  startTestGateway,
  STRONG_PASSWORD,
  type SignedUp,
  type TestGateway,
} from '../../../test/support/gateway';
import { Invalidation } from '../src/instances/invalidation';
import { instancePrefix, instancePurgeProcessor } from '../src/jobs/instance-purge';
import { call, storeEnv, STORES, uploadFile } from './files-support';

jest.setTimeout(120_000);

const GRACE_S = 7 * 24 * 3600;
const silent = createLogger({ level: 'silent' });

/** Every row of every table of the gateway's database that mentions `text` anywhere (the whole row as text). */
async function rowsMentioning(databaseUrl: string, text: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    expect(tables.length).toBeGreaterThan(10);
    const found: Record<string, number> = {};
    for (const { name } of tables) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(name)} t WHERE t::text LIKE '%' || $1 || '%'`,
        [text],
      );
      if (rows[0]!.n > 0) found[name] = rows[0]!.n;
    }
    return found;
  } finally {
    await client.end();
  }
}

async function keysUnder(store: BlobStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of store.list(prefix)) keys.push(object.key);
  return keys;
}

/** A retirement token for `address` signed by a key that is not the instance's. */
async function strangerToken(address: string): Promise<string> {
  const pair = await generateRsaKeyPair();
  const keys = signingKeys(pair.keyId, pair.privateKeyPem);
  return issueServiceToken(keys, { issuer: address, audience: DEX_ISSUER, scope: RETIRE_SCOPE }, Math.floor(Date.now() / 1000));
}

/** An instance with something in every part: files (bytes, one in the trash), records, a user, an object of its own. */
async function furnish(gw: TestGateway, owner: SignedUp): Promise<void> {
  await uploadFile(gw, owner, { name: 'a.txt', source: 'purge' }, Buffer.from('first'));
  await uploadFile(gw, owner, { name: 'b.txt', source: 'purge' }, Buffer.from('second'));
  const trashed = await uploadFile(gw, owner, { name: 'c.txt', source: 'purge' }, Buffer.from('third'));
  await call(gw, 'delete', `/file/${trashed.fileId}`, owner).expect(200);
  await call(gw, 'post', '/upload', owner, { name: 'never-sent.txt', source: 'purge' }).expect(200);
  await request(gw.app)
    .post('/api/v2.6/data/notes/items')
    .set('Host', owner.address)
    .set('X-Auth-Token', owner.token)
    .send({ n: 1 })
    .expect(201);
  await request(gw.app)
    .post('/users/user')
    .set('Host', owner.address)
    .set('X-Auth-Token', owner.token)
    .send({ username: 'helper', password: STRONG_PASSWORD })
    .expect(201);
  await gw.blobStore.write(
    `${owner.address}/exports/archive.zip`,
    (async function* () {
      yield Buffer.from('an export');
    })(),
  );
}

const close = (gw: TestGateway, owner: SignedUp) =>
  request(gw.app)
    .post('/api/v2.6/instance/close')
    .set('Host', owner.address)
    .set('X-Auth-Token', owner.token)
    .send({ password: owner.password });

describe.each(STORES)('after the grace period, on the %s store', (store) => {
  let cluster: TestCluster;
  let gw: TestGateway;
  let alice: SignedUp;
  let bob: SignedUp;
  let aliceId: string;
  let purge: ReturnType<typeof instancePurgeProcessor>;

  beforeAll(async () => {
    cluster = await startTestCluster({ shared: storeEnv(store) });
    gw = cluster.gw;
    alice = await signUp(gw.app, 'alice');
    bob = await signUp(gw.app, 'bob');
    await eventually(
      async () => (await cluster.dexDb.registeredInstance.findUnique({ where: { address: alice.address } }))?.state === 'registered',
      20_000,
    );
    await furnish(gw, alice);
    await furnish(gw, bob);
    aliceId = (await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address } })).id;
    purge = instancePurgeProcessor({
      erasure: new InstanceErasureRepository(gw.db),
      store: gw.blobStore,
      dexUrl: cluster.dexUrl,
      masterKey: gw.config.MASTER_KEY,
      clock: gw.clock,
      announce: (message) => new Invalidation(gw.redis, undefined, `${gw.redisPrefix}:invalidate`, silent).publish(message),
      logger: silent,
    });
  });
  afterAll(() => cluster?.close());

  it('erases nothing before the grace date', async () => {
    await close(gw, alice).expect(200);
    gw.clock.advance(GRACE_S - 60);
    expect(await purge()).toEqual({ erased: [] });
    expect(await keysUnder(gw.blobStore, instancePrefix(alice.address))).toHaveLength(4);
    expect(Object.keys(await rowsMentioning(gw.databaseUrl, aliceId)).length).toBeGreaterThan(5);
  });

  it('then erases every row with its id, every object under its prefix, and retires it at dex; other instances keep theirs', async () => {
    // Bob's events numbered first (as the worker's numbering step would do at any moment), so the
    // comparison sees only what the purge did.
    await new EventRepository(gw.db).number((await gw.db.instance.findUniqueOrThrow({ where: { address: bob.address } })).id);
    const bobBefore = await rowsMentioning(
      gw.databaseUrl,
      (await gw.db.instance.findUniqueOrThrow({ where: { address: bob.address } })).id,
    );
    gw.clock.advance(61);
    expect(await purge()).toEqual({ erased: [alice.address] });

    expect(await rowsMentioning(gw.databaseUrl, aliceId)).toEqual({});
    expect(await keysUnder(gw.blobStore, instancePrefix(alice.address))).toEqual([]);
    expect(await rowsMentioning(gw.databaseUrl, (await gw.db.instance.findUniqueOrThrow({ where: { address: bob.address } })).id)).toEqual(
      bobBefore,
    );
    expect(await keysUnder(gw.blobStore, instancePrefix(bob.address))).toHaveLength(4);

    const atDex = await cluster.dexDb.registeredInstance.findUniqueOrThrow({ where: { address: alice.address } });
    expect(atDex).toMatchObject({
      state: 'retired',
      publicKeyPem: null,
      fingerprint: null,
      pendingKeyPem: null,
      retiredAt: expect.any(Date),
    });
    expect((await cluster.dexDb.registeredInstance.findUniqueOrThrow({ where: { address: bob.address } })).state).toBe('registered');
  });

  it('leaves an address nobody gets again: 404 at the gateway, sign-up refused here and registration at dex', async () => {
    await request(gw.app).get('/publickey').set('Host', alice.address).expect(404);
    const again = await request(gw.app)
      .post('/api/signup')
      .set('Host', CLUSTER)
      .send({ fullName: 'New Alice', username: 'alice', email: 'new@example.com', pass: STRONG_PASSWORD, passRepeat: STRONG_PASSWORD });
    expect([again.status, again.body.message]).toEqual([409, expect.stringMatching(/closed; it cannot be used again/)]);
    const check = await request(gw.app).get('/api/signup/available?username=alice').set('Host', CLUSTER).expect(200);
    expect(check.body.available).toBe(false);
    const registered = await request(cluster.dex.app).post('/api/users/registerHat').send({ hatAddress: alice.address });
    expect([registered.status, registered.body.message]).toEqual([409, expect.stringMatching(/retired/)]);
  });

  it('is idempotent: a second run finds nothing, and dex answers a repeated retirement with 200', async () => {
    expect(await purge()).toEqual({ erased: [] });
    // Dex holds no key for it any more, so any token naming it is answered alike.
    const repeated = await request(cluster.dex.app)
      .post('/api/v3/users/retireHat')
      .set('X-Auth-Token', await strangerToken(alice.address));
    expect([repeated.status, repeated.body]).toEqual([200, { message: 'Retired', hatAddress: alice.address }]);
  });
});

describe('dex retireHat', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
  });
  afterAll(() => cluster?.close());

  it('refuses a token not signed by the instance key, and answers 404 for an address it never keyed', async () => {
    const zed = await signUp(cluster.gw.app, 'zed');
    await eventually(
      async () => (await cluster.dexDb.registeredInstance.findUnique({ where: { address: zed.address } }))?.state === 'registered',
      20_000,
    );
    const retire = (token?: string) => {
      const req = request(cluster.dex.app).post('/api/v3/users/retireHat');
      return token === undefined ? req : req.set('X-Auth-Token', token);
    };
    // Its owner's log-in token is signed by the right key but is no retirement token.
    for (const token of [undefined, 'nonsense', zed.token, await strangerToken(zed.address)])
      expect((await retire(token)).status).toBe(401);
    expect((await retire(await strangerToken(`nobody.${CLUSTER}`))).status).toBe(404);
    expect((await cluster.dexDb.registeredInstance.findUniqueOrThrow({ where: { address: zed.address } })).state).toBe('registered');
  });
});

describe('kill -9 of the worker mid-purge', () => {
  let gw: TestGateway;
  let child: ChildProcess | undefined;
  let worker: Stoppable | undefined;
  let fakeDex: http.Server;
  let answer = false;
  const tokens: string[] = [];

  beforeAll(async () => {
    // A dex that holds retireHat calls until told to answer: the purge is stuck between the store and the rows.
    fakeDex = http.createServer((req, res) => {
      const ok = (message: string) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ message }));
      // The sign-up's registration: answered at once.
      if (req.url !== '/api/v3/users/retireHat') return ok('Registered');
      tokens.push(String(req.headers['x-auth-token']));
      if (answer) return ok('Retired');
      req.socket.setTimeout(0);
    });
    await new Promise<void>((resolve) => fakeDex.listen(0, '127.0.0.1', resolve));
    gw = await startTestGateway({ DEX_URL: `http://127.0.0.1:${(fakeDex.address() as { port: number }).port}` });
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await worker?.close();
    fakeDex.closeAllConnections();
    await new Promise((resolve) => fakeDex.close(resolve));
    await gw.close();
  });

  it('leaves the instance to the next worker, which finishes the erasure', async () => {
    const zoe = await signUp(gw.app, 'zoe');
    await furnish(gw, zoe);
    await close(gw, zoe).expect(200);
    const instance = await gw.db.instance.findUniqueOrThrow({ where: { address: zoe.address } });
    // The worker's clock is the real one: the grace period ends now.
    // …Many: Prisma then asks for no RETURNING, whose enum casts a Citus coordinator refuses on the reference table Instance.
    await gw.db.instance.updateMany({ where: { id: instance.id }, data: { closeAfter: new Date(Date.now() - 1000) } });
    const env: Record<string, string> = {
      LOG_LEVEL: 'silent',
      CLUSTER_DOMAIN: CLUSTER,
      DATABASE_URL: gw.databaseUrl,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      QUEUE_PREFIX: gw.redisPrefix,
      DEX_URL: gw.config.DEX_URL as string,
      MASTER_KEY: gw.config.MASTER_KEY.toString('hex'),
      DATA_DIR: gw.config.DATA_DIR,
    };
    child = spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', 'apps/gateway/src/worker-main.ts'], {
      cwd: path.resolve(__dirname, '../../..'),
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    await eventually(async () => tokens.length > 0, 30_000);
    // Mid-purge: the objects are gone, the rows (and the key) still there.
    expect(await keysUnder(gw.blobStore, instancePrefix(zoe.address))).toEqual([]);
    expect(Object.keys(await rowsMentioning(gw.databaseUrl, instance.id)).length).toBeGreaterThan(5);
    child.kill('SIGKILL');
    await new Promise((resolve) => child?.once('exit', resolve));
    child = undefined;
    answer = true;

    worker = await startGatewayWorker(loadConfigFor('gateway-worker', env));
    await eventually(async () => (await gw.db.instance.findUnique({ where: { id: instance.id } })) === null, 30_000);
    expect(await rowsMentioning(gw.databaseUrl, instance.id)).toEqual({});
    expect(await gw.db.retiredAddress.findUnique({ where: { address: zoe.address } })).toMatchObject({ address: zoe.address });
    // Each call to dex was signed with the instance's own key, for dex, to retire it.
    const key = createPublicKey(instance.publicKeyPem);
    for (const token of tokens)
      expect(
        verifyServiceToken(token, key, { issuer: zoe.address, audience: DEX_ISSUER, scope: RETIRE_SCOPE }, Math.floor(Date.now() / 1000)),
      ).not.toBeNull();
  });
});
