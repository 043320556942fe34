// Gateways cache instances and account state; a change made through one gateway must take effect on
// every other within 1 s (instances/invalidation.ts). Two gateway apps on one database, each with its
// own Redis connections, stand for two gateway processes.
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import request from 'supertest';
import type { RequestListener } from 'node:http';
import { listenToStatements, UserRepository } from '@pds/db';
import { addUser, signUp, STRONG_PASSWORD } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, installApp } from './apps-fixtures';
import { call, uploadFile } from './files-support';
import { staticDexKey } from '../src/apps/dex-keys';
import { startPeer } from './peer-gateway';

const closers: (() => Promise<void>)[] = [];
// Declared before useGateway's, as hooks run in the order declared: the peers let go of the database
// before the gateway drops it.
afterAll(async () => {
  for (const close of closers) await close();
});
const { gw: a, dex, owners } = useGateway({ dex: true, owners: ['alice'] });
const owner = owners.alice;

/** Another gateway of the same cluster: same database and key prefix, Redis connections of its own. */
function peer(options: { subscribed: boolean }): { app: RequestListener; subscriber?: Redis } {
  const { gateway, subscriber, close } = startPeer(a, { dexKeys: staticDexKey(dex.publicKey) }, options);
  closers.push(close);
  return { app: gateway.app, subscriber };
}

const validate = (app: RequestListener, host: string, token: string) =>
  request(app).get('/users/access_token/validate').set('Host', host).set('X-Auth-Token', token);

/** Milliseconds until `app` answers `status` for the token, polling; fails after 3 s. */
async function msUntil(app: RequestListener, host: string, token: string, status: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < 3000) {
    if ((await validate(app, host, token)).status === status) return performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`still not ${status} after 3 s`);
}

let b: RequestListener;

beforeAll(async () => {
  b = peer({ subscribed: true }).app;
  // Let B's subscription come up before anything is cached there.
  await new Promise((resolve) => setTimeout(resolve, 200));
});

describe('a change made through one gateway', () => {
  it('refuses a user disabled on gateway A on gateway B within 1 s, and accepts them again once enabled', async () => {
    const bob = await addUser(a.app, owner, 'bob');
    expect((await validate(b, owner.address, bob.token)).status).toBe(200); // B has bob cached now

    await request(a.app).put(`/users/user/${bob.userId}/disable`).set('Host', owner.address).set('X-Auth-Token', owner.token).expect(200);
    expect(await msUntil(b, owner.address, bob.token, 401)).toBeLessThan(1000);
    const refused = await validate(b, owner.address, bob.token);
    expect(refused.body).toEqual({ error: 'Not Authenticated', message: 'The supplied authentication is invalid', cause: 'unknown user' });

    await request(a.app).put(`/users/user/${bob.userId}/enable`).set('Host', owner.address).set('X-Auth-Token', owner.token).expect(200);
    expect(await msUntil(b, owner.address, bob.token, 200)).toBeLessThan(1000);
  });

  it('refuses a deleted user on gateway B within 1 s', async () => {
    const carol = await addUser(a.app, owner, 'carol');
    expect((await validate(b, owner.address, carol.token)).status).toBe(200);
    await request(a.app).delete(`/users/user/${carol.userId}`).set('Host', owner.address).set('X-Auth-Token', owner.token).expect(200);
    expect(await msUntil(b, owner.address, carol.token, 401)).toBeLessThan(1000);
    expect((await request(b).get('/users/user').set('Host', owner.address).set('X-Auth-Token', owner.token)).body).not.toContainEqual(
      expect.objectContaining({ userId: carol.userId }),
    );
  });

  it('refuses the tokens of an app disabled on gateway A on gateway B within 1 s, and accepts them after a new setup', async () => {
    const app = await installApp(a, dex, owner, appRecord('notes'));
    const items = () => request(b).get('/api/v2.6/data/notes/items').set('Host', owner.address).set('X-Auth-Token', app.token);
    expect((await items()).status).toBe(200);

    await request(a.app)
      .post(`/api/v2.6/applications/${app.appId}/disable`)
      .set('Host', owner.address)
      .set('X-Auth-Token', owner.token)
      .expect(200);
    expect(await msUntil(b, owner.address, app.token, 401)).toBeLessThan(1000);
    expect((await items()).status).toBe(401);

    await request(a.app)
      .post(`/api/v2.6/applications/${app.appId}/setup`)
      .set('Host', owner.address)
      .set('X-Auth-Token', owner.token)
      .expect(200);
    expect(await msUntil(b, owner.address, app.token, 200)).toBeLessThan(1000);
  });

  it("refuses a user's read on gateway B within 1 s of its grant being revoked on A, and serves it again once granted", async () => {
    const dora = await addUser(a.app, owner, 'dora');
    const grant = { userId: dora.userId, namespace: 'diary', access: 'read' };
    const grants = (method: 'post' | 'delete') =>
      request(a.app)[method]('/api/v2.6/data-grants').set('Host', owner.address).set('X-Auth-Token', owner.token).send(grant);
    const read = () => request(b).get('/api/v2.6/data/diary/days').set('Host', owner.address).set('X-Auth-Token', dora.token);
    await grants('post').expect(201);
    expect((await read()).status).toBe(200); // B has dora's grants cached now

    await grants('delete').expect(200);
    const start = performance.now();
    while ((await read()).status !== 403) {
      expect(performance.now() - start).toBeLessThan(3000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(performance.now() - start).toBeLessThan(1000);
    await grants('post').expect(201);
    const again = performance.now();
    while ((await read()).status !== 200) {
      expect(performance.now() - again).toBeLessThan(3000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  it('serves the new instance on gateway B after the address was deleted and signed up again on A', async () => {
    const first = await signUp(a.app, 'hank');
    const key = async () => (await request(b).get('/publickey').set('Host', first.address)).text;
    const firstKey = await key();
    expect(firstKey).toMatch(/BEGIN PUBLIC KEY/);

    // Plain SQL: Prisma's delete returns the row with enum casts, which a Citus coordinator refuses on a reference table.
    await a.db.pool.query('DELETE FROM "Instance" WHERE "address" = $1', [first.address]);
    const second = await signUp(a.app, 'hank');
    const start = performance.now();
    while ((await key()) === firstKey && performance.now() - start < 3000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(performance.now() - start).toBeLessThan(1000);
    expect(await key()).not.toBe(firstKey);
    expect((await validate(b, second.address, second.token)).status).toBe(200);
    expect((await validate(b, first.address, first.token)).status).toBe(401);
    // B signs with the new instance's key: the one it kept for the old instance went with the change.
    const login = await request(b)
      .get('/users/access_token')
      .set('Host', second.address)
      .set('username', 'hank')
      .set('password', STRONG_PASSWORD);
    expect(login.status).toBe(200);
    expect((await validate(a.app, second.address, login.body.accessToken)).status).toBe(200);
  });
});

describe('a gateway that cannot hear invalidations', () => {
  it('still refuses a user disabled elsewhere within about 1 s, since it then keeps accounts for 1 s only', async () => {
    const deaf = peer({ subscribed: false }).app;
    const dave = await addUser(a.app, owner, 'dave', STRONG_PASSWORD);
    expect((await validate(deaf, owner.address, dave.token)).status).toBe(200);
    await request(a.app).put(`/users/user/${dave.userId}/disable`).set('Host', owner.address).set('X-Auth-Token', owner.token).expect(200);
    // One second of trust plus the polling step.
    expect(await msUntil(deaf, owner.address, dave.token, 401)).toBeLessThan(1500);
  });

  it('forgets everything it cached once its subscription is back, since messages sent meanwhile are lost', async () => {
    const { app: c, subscriber } = peer({ subscribed: true });
    await new Promise((resolve) => subscriber?.once('ready', resolve));
    const erin = await addUser(a.app, owner, 'erin', STRONG_PASSWORD);
    expect((await validate(c, owner.address, erin.token)).status).toBe(200);

    subscriber?.disconnect();
    await request(a.app).put(`/users/user/${erin.userId}/disable`).set('Host', owner.address).set('X-Auth-Token', owner.token).expect(200);
    await subscriber?.connect();
    expect(await msUntil(c, owner.address, erin.token, 401)).toBeLessThan(500);
  });
});

/** The activity log's batched write, which its timer may send in any window: not the request's own. */
const readLogWrite = (text: string) => text.includes('"ReadActivity"');

/** Statements the gateway sends to PostgreSQL for the requests of `run` (each one counted, also within a batch). */
async function statementsDuring(run: () => Promise<unknown>): Promise<number> {
  let count = 0;
  listenToStatements((text) => {
    if (!readLogWrite(text)) count++;
  });
  try {
    await run();
  } finally {
    listenToStatements(undefined);
  }
  return count;
}

describe('database round trips on a warm cache', () => {
  it('answers validate with none, and file get and content with one', async () => {
    const file = await uploadFile(a, { address: owner.address, token: owner.token }, { name: 'warm.txt', source: 'cache' });
    const as = { address: owner.address, token: owner.token };
    const get = () => call(a, 'get', `/file/${file.fileId}`, as).expect(200);
    const content = () => call(a, 'get', `/content/${file.fileId}`, as).expect(303);
    const valid = () => validate(a.app, owner.address, owner.token).expect(200);
    for (const warm of [get, content, valid]) await warm();

    expect(await statementsDuring(valid)).toBe(0);
    expect(await statementsDuring(get)).toBe(1);
    expect(await statementsDuring(content)).toBe(1);
  });

  it("answers an app's table read with one: its grants are cached with its account", async () => {
    const notes = await installApp(a, dex, owner, appRecord('warmnotes'));
    const read = () =>
      request(a.app).get('/api/v2.6/data/warmnotes/items').set('Host', owner.address).set('X-Auth-Token', notes.token).expect(200);
    await read();
    expect(await statementsDuring(read)).toBe(1);
  });
});

describe('private keys', () => {
  it('are opened only to sign: a resolved instance holds its public key alone, and the first log-in reads the private key once', async () => {
    a.registry.forgetAll();
    await validate(a.app, owner.address, owner.token).expect(200);
    const resolved = await a.registry.resolve(owner.address);
    expect(Object.keys(resolved?.keys ?? {})).not.toContain('privateKey');

    const login = () =>
      request(a.app)
        .get('/users/access_token')
        .set('Host', owner.address)
        .set('username', owner.username)
        .set('password', STRONG_PASSWORD)
        .expect(200);
    const first = await statementsDuring(login);
    const next = await statementsDuring(login);
    expect(first).toBe(next + 1);
    const token = (await login()).body.accessToken as string;
    expect((await validate(a.app, owner.address, token)).status).toBe(200);
  });
});

describe('what is cached of an account', () => {
  it('is the id, the kind, whether it is disabled and since when its tokens count: never the password hash, e-mail, name or second factor', async () => {
    const instanceId = (await a.registry.resolve(owner.address))?.instance.id as string;
    const account = await new UserRepository(a.db).findAccount(instanceId, owner.userId);
    expect(account).toEqual({ id: owner.userId, kind: 'owner', disabled: false, tokensValidAfter: null });
  });
});
