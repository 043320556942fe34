// An instance that is not active (issue 22): suspended by the operator, every call to it answers 423 and
// changes nothing, its tokens and data kept for when it resumes; closing (by its owner), only the owner
// gets through, and only on the routes of the closing flow. Other instances are never affected, and
// every gateway of the cluster refuses from the next request (the cached instance is invalidated).
import { randomBytes } from 'node:crypto';
import type { RequestListener } from 'node:http';
import request from 'supertest';
import type { SigningKeys } from '@pds/tokens';
import { staticDexKey } from '../src/apps/dex-keys';
import { addUser, signUp, startTestGateway, STRONG_PASSWORD, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { appRecord, dexKeyPair, push, pushToken } from './apps-fixtures';
import { peerGateway } from './peer-gateway';
import { call, FILES, putBytes, uploadFile } from './files-support';

const TOKEN = randomBytes(32).toString('hex');
let gw: TestGateway;
let dex: SigningKeys;
let alice: SignedUp;
let bob: SignedUp;
let carol: { userId: string; token: string };
let publicFile: string;
let peer: RequestListener;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dex = await dexKeyPair();
  gw = await startTestGateway({ ADMIN_TOKEN: TOKEN }, { dexKeys: staticDexKey(dex.publicKey) });
  alice = await signUp(gw.app, 'alice');
  bob = await signUp(gw.app, 'bob');
  carol = await addUser(gw.app, alice, 'carol');
  const file = await uploadFile(gw, alice, { name: 'open.txt', source: 'state' });
  publicFile = file.fileId;
  await call(gw, 'get', `/allowAccessPublic/${publicFile}`, alice).expect(200);
  peer = peerGateway(gw, closers);
});
afterAll(async () => {
  for (const close of closers) await close();
  await gw.close();
});

/** Resolves once `app` answers `status` to a validation of `who`'s token; fails after 1 s. */
async function answers(app: RequestListener, who: SignedUp, status: number): Promise<void> {
  const deadline = Date.now() + 1000;
  while (
    (await request(app).get('/users/access_token/validate').set('Host', who.address).set('X-Auth-Token', who.token)).status !== status
  ) {
    if (Date.now() > deadline) throw new Error(`still not ${status} after 1 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const operator = (action: 'suspend' | 'resume', address: string, reason = 'test') =>
  request(gw.admin!).post(`/instances/${address}/${action}`).set('Authorization', `Bearer ${TOKEN}`).send({ reason });

/** A call of each kind an instance answers: log-in, token, owner, user, anonymous, data, files, pages. */
function calls(app: RequestListener, who: SignedUp) {
  const on = (method: 'get' | 'post' | 'put', path: string, token?: string) => {
    const req = request(app)[method](path).set('Host', who.address);
    return token ? req.set('X-Auth-Token', token) : req;
  };
  return {
    'log-in': () => on('get', '/users/access_token').set('username', who.username).set('password', who.password),
    'log-in by query': () => on('get', `/?username=${who.username}&password=${who.password}`),
    validate: () => on('get', '/users/access_token/validate', who.token),
    'public key': () => on('get', '/publickey'),
    version: () => on('get', '/api/v2.6/version'),
    'file search': () => on('post', `${FILES}/search`, who.token).send({}),
    upload: () => on('post', `${FILES}/upload`, who.token).send({ name: 'x.txt', source: 'state' }),
    'data write': () => on('post', '/api/v2.6/data/notes/items', who.token).send({ n: 1 }),
    'data read': () => on('get', '/api/v2.6/data/notes/items', who.token),
    'public profile': () => on('get', '/api/v2.6/phata/profile'),
  };
}

describe('a suspended instance', () => {
  it('answers every call with 423 and changes nothing, on every gateway; other instances answer as before', async () => {
    // The peer has alice's instance cached before the suspension.
    await request(peer).get('/users/access_token/validate').set('Host', alice.address).set('X-Auth-Token', alice.token).expect(200);
    const aliceRecords = () => gw.db.dataRecord.count({ where: { instance: { address: alice.address } } });
    const before = await aliceRecords();
    await operator('suspend', alice.address, 'abuse report 9').expect(200);
    // The peer hears of it through Redis within milliseconds (the contract: within 1 s).
    await answers(peer, alice, 423);

    for (const app of [gw.app, peer]) {
      for (const [name, send] of Object.entries(calls(app, alice))) {
        const res = await send();
        expect([name, res.status, res.body]).toEqual([name, 423, { error: 'Locked', message: expect.stringMatching(/suspended/) }]);
      }
      await request(app).get(`${FILES}/content/${publicFile}`).set('Host', alice.address).expect(423);
      await request(app).get(`${FILES}/file/${publicFile}`).set('Host', alice.address).set('X-Auth-Token', carol.token).expect(423);
      for (const [name, send] of Object.entries(calls(app, bob))) expect([name, (await send()).status]).not.toEqual([name, 423]);
    }
    expect(await aliceRecords()).toBe(before);
    // The operator's reason is theirs: no call of the instance shows it.
    const res = await calls(gw.app, alice)['data read']();
    expect(JSON.stringify(res.body)).not.toContain('abuse');
  });

  it('refuses an upload address it signed before, and takes app pushes from dex (the cluster’s own bookkeeping)', async () => {
    await operator('resume', alice.address).expect(200);
    const started = await call(gw, 'post', '/upload', alice, { name: 'late.txt', source: 'state' }).expect(200);
    await operator('suspend', alice.address).expect(200);
    expect(await putBytes(gw, started.body.contentUrl, Buffer.from('late'))).toBe(423);
    const pushed = await push(gw.app, alice.address, pushToken(gw, dex, alice.address), 'notes', {
      version: 1,
      record: appRecord('notes'),
    });
    expect(pushed.status).toBe(200);
  });

  it('serves again once resumed, with the tokens issued before', async () => {
    await operator('resume', alice.address, 'cleared').expect(200);
    await answers(peer, alice, 200);
    for (const app of [gw.app, peer]) {
      await request(app).get('/users/access_token/validate').set('Host', alice.address).set('X-Auth-Token', alice.token).expect(200);
      await request(app).post(`${FILES}/search`).set('Host', alice.address).set('X-Auth-Token', carol.token).send({}).expect(200);
    }
  });
});

describe('a closing instance', () => {
  beforeAll(async () => {
    // Set directly: the owner's closing flow itself is tested in instance-closing.test.ts.
    // …Many: Prisma then asks for no RETURNING, whose enum casts a Citus coordinator refuses on the reference table Instance.
    await gw.db.instance.updateMany({ where: { address: alice.address }, data: { state: 'closing' } });
    await gw.registry.changed(alice.address);
  });
  afterAll(async () => {
    await gw.db.instance.updateMany({ where: { address: alice.address }, data: { state: 'active' } });
    await gw.registry.changed(alice.address);
  });

  it('answers 410 to everyone but its owner, and to the owner outside the closing flow', async () => {
    const user = { ...alice, username: 'carol', password: STRONG_PASSWORD, token: carol.token };
    for (const [name, send] of Object.entries(calls(gw.app, user))) {
      const res = await send();
      expect([name, res.status, res.body]).toEqual([name, 410, { error: 'Gone', message: expect.stringMatching(/being closed/) }]);
    }
    const owner = calls(gw.app, alice);
    for (const name of ['file search', 'data write', 'validate', 'version', 'public profile'] as const) {
      expect([name, (await owner[name]()).status]).toEqual([name, 410]);
    }
    await request(gw.app).get(`${FILES}/content/${publicFile}`).set('Host', alice.address).expect(410);
    // A wrong password is still a 401: the closing says nothing about an account.
    await request(gw.app)
      .get('/users/access_token')
      .set('Host', alice.address)
      .set('username', 'carol')
      .set('password', 'wrong')
      .expect(401);
    // The other instances do not notice.
    await calls(gw.app, bob)['file search']().expect(200);
  });

  it("lets the owner log in, by headers, by query and with a token to refresh (the closing flow's way in)", async () => {
    const owner = calls(gw.app, alice);
    expect((await owner['log-in']()).status).toBe(200);
    expect((await owner['log-in by query']()).status).toBe(200);
    await request(gw.app).get(`/?access_token=${alice.token}`).set('Host', alice.address).expect(200);
    await request(gw.app).get(`/?access_token=${carol.token}`).set('Host', alice.address).expect(410);
  });
});
