// Closing an instance, as its owner does it (issue 19): the password re-entered, every token of the
// instance refused at once on every gateway (410 for users, apps and the owner outside the closing
// flow), the owner's own log-in still reads the grace date and cancels, and cancelling restores
// everything with the tokens issued before. The erasure after the grace period: test/instance-purge.test.ts.
import type { RequestListener } from 'node:http';
import request from 'supertest';
import { objectKey } from '@pds/storage';
import type { SignedUp } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, installApp } from './apps-fixtures';
import { exportKey } from '../src/portability/keys';
import { getBytes, uploadFile } from './files-support';
import { peerGateway } from './peer-gateway';

const CLOSE = '/api/v2.6/instance/close';
const DAY_MS = 24 * 3600 * 1000;

const { gw, dex, owners, users } = useGateway({
  dex: true,
  env: { INSTANCE_CLOSE_GRACE_DAYS: '3' },
  owners: ['alice', 'bob'],
  users: { carol: 'alice' },
});
const { alice, bob } = owners;
let app: { token: string };
/** The object key of a file of alice's, uploaded before the closing. */
let file: string;
let peer: RequestListener;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  app = await installApp(gw, dex, alice, appRecord('notes'));
  file = objectKey(alice.address, (await uploadFile(gw, alice, { name: 'kept.txt', source: 'closing' })).fileId);
  peer = peerGateway(gw, closers);
});
afterAll(async () => {
  for (const close of closers) await close();
});

const as = (server: RequestListener, who: { token: string }, address = alice.address) => ({
  get: (path: string) => request(server).get(path).set('Host', address).set('X-Auth-Token', who.token),
  post: (path: string) => request(server).post(path).set('Host', address).set('X-Auth-Token', who.token),
});
const login = (server: RequestListener, who: Pick<SignedUp, 'username' | 'password'>) =>
  request(server).get('/users/access_token').set('Host', alice.address).set('username', who.username).set('password', who.password);

/** Resolves once every token answers `status` to a validation on the peer; fails after 1 s. */
async function peerAnswers(tokens: { token: string }[], status: number): Promise<void> {
  const deadline = Date.now() + 1000;
  for (;;) {
    const statuses = await Promise.all(tokens.map(async (t) => (await as(peer, t).get('/users/access_token/validate')).status));
    if (statuses.every((s) => s === status)) return;
    if (Date.now() > deadline) throw new Error(`still ${statuses.join(', ')} after 1 s, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('closing', () => {
  it('refuses a wrong password with 403, a user or an app with 403, bad input with 400, and changes nothing', async () => {
    const wrong = await as(gw.app, alice).post(CLOSE).send({ password: 'not-it' });
    expect([wrong.status, wrong.body]).toEqual([403, { error: 'Forbidden', message: expect.stringMatching(/password/) }]);
    for (const body of [{}, { password: '' }, { password: 42 }]) expect((await as(gw.app, alice).post(CLOSE).send(body)).status).toBe(400);
    expect((await as(gw.app, users.carol).post(CLOSE).send({ password: users.carol.password })).status).toBe(403);
    expect((await as(gw.app, app).post(CLOSE).send({ password: alice.password })).status).toBe(403);
    expect((await as(gw.app, alice).get(CLOSE).expect(200)).body).toEqual({ state: 'active' });
    expect((await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address } })).state).toBe('active');
  });

  it('answers the grace date, and from then every token of the instance is refused at once, on every gateway', async () => {
    // The peer has the instance and the tokens cached before the closing.
    await peerAnswers([alice, users.carol, app], 200);
    const res = await as(gw.app, alice).post(CLOSE).send({ password: alice.password }).expect(200);
    const closeAfter = new Date(gw.clock().getTime() + 3 * DAY_MS).toISOString();
    expect(res.body).toEqual({ state: 'closing', closeAfter });

    for (const who of [users.carol, app, alice]) {
      const read = await as(gw.app, who).get('/api/v2.6/data/notes/items');
      expect([read.status, read.body]).toEqual([410, { error: 'Gone', message: expect.stringMatching(/being closed/) }]);
      expect((await as(gw.app, who).post('/api/v2.6/data/notes/items').send({ a: 1 })).status).toBe(410);
      expect((await as(gw.app, who).get('/users/access_token/validate')).status).toBe(410);
    }
    await peerAnswers([alice, users.carol, app], 410);
    // Users cannot log in; the state and the cancel are the owner's alone.
    expect((await login(gw.app, users.carol)).status).toBe(410);
    for (const who of [users.carol, app]) {
      expect((await as(gw.app, who).get(CLOSE)).status).toBe(410);
      expect((await as(gw.app, who).post(`${CLOSE}/cancel`)).status).toBe(410);
    }
    // Nobody else notices.
    await as(gw.app, bob, bob.address).get('/api/v2.6/data/notes/items').expect(200);
    const row = await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address }, include: { stateChanges: true } });
    expect([row.state, row.closeAfter?.toISOString(), row.stateChanges.map((c) => [c.state, c.actor])]).toEqual([
      'closing',
      closeAfter,
      [['closing', 'owner']],
    ]);
  });

  it("lets the owner's own log-in read the grace date, and refuses to close twice", async () => {
    const fresh = await login(gw.app, alice).expect(200);
    for (const token of [alice.token, fresh.body.accessToken as string]) {
      const state = await as(gw.app, { token }).get(CLOSE).expect(200);
      expect(state.body).toEqual({ state: 'closing', closeAfter: expect.any(String) });
    }
    expect((await as(gw.app, alice).post(CLOSE).send({ password: alice.password })).status).toBe(410);
  });

  it('lets the owner export their data during the grace period, and serves a closing instance no other bytes', async () => {
    const started = await as(gw.app, alice).post('/api/v2.6/export').expect(202);
    expect((await as(gw.app, alice).get('/api/v2.6/export').expect(200)).body).toHaveLength(1);
    await as(gw.app, alice).get(`/api/v2.6/export/${started.body.exportId}`).expect(200);
    for (const who of [users.carol, app]) expect((await as(gw.app, who).get('/api/v2.6/export')).status).toBe(410);
    // The archive's signed address still works; a file's, signed before the closing, does not.
    const archive = exportKey(alice.address, 'e0000000-0000-4000-8000-000000000000');
    await gw.blobStore.write(
      archive,
      (async function* () {
        yield Buffer.from('the archive');
      })(),
    );
    const signing = { ttlSeconds: 60, baseUrl: `http://${alice.address}` };
    const download = await getBytes(gw, await gw.blobStore.presignGet(archive, signing));
    expect([download.status, download.body.toString()]).toEqual([200, 'the archive']);
    const refused = new URL(await gw.blobStore.presignGet(file, signing));
    const res = await request(gw.app).get(refused.pathname).set('Host', alice.address);
    expect([res.status, res.body]).toEqual([410, { error: 'Gone', message: expect.stringMatching(/being closed/) }]);
  });

  it('cancels: every gateway serves everyone again, with the tokens issued before', async () => {
    const res = await as(gw.app, alice).post(`${CLOSE}/cancel`).expect(200);
    expect(res.body).toEqual({ state: 'active' });
    await peerAnswers([alice, users.carol, app], 200);
    for (const who of [alice, app]) await as(gw.app, who).get('/api/v2.6/data/notes/items').expect(200);
    await login(gw.app, users.carol).expect(200);
    expect((await as(gw.app, alice).post(`${CLOSE}/cancel`)).status).toBe(409);
    const row = await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address } });
    expect([row.state, row.closeAfter]).toEqual(['active', null]);
  });

  it('cannot be cancelled once the grace period has ended (the purge owns the instance then)', async () => {
    await as(gw.app, alice).post(CLOSE).send({ password: alice.password }).expect(200);
    gw.clock.advance(3 * 24 * 3600);
    const token = (await login(gw.app, alice).expect(200)).body.accessToken as string;
    const late = await as(gw.app, { token }).post(`${CLOSE}/cancel`);
    expect([late.status, late.body.message]).toEqual([409, expect.stringMatching(/grace period has ended/)]);
    expect((await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address } })).state).toBe('closing');
  });
});
