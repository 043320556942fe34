// Passwords people can recover and sessions they can end, as a client and a mailbox see them: the
// reset mail arrives over real SMTP (test/support/mailbox.ts) only for the owner's address, its link
// works once, for 24 hours, and only the latest; a change needs the current password; and a reset, a
// change or "log out everywhere" refuses older tokens on another gateway of the cluster within 1 s.
import { performance } from 'node:perf_hooks';
import type { RequestListener } from 'node:http';
import { Redis } from 'ioredis';
import request from 'supertest';
import { createGatewayDb } from '@pds/db';
import { createLogger } from '@pds/runtime';
import { createApp } from '@pds/gateway';
import { RESET_REQUESTED } from '../src/auth/password-service';
import { addUser, requireEnv, STRONG_PASSWORD } from '../../../test/support/gateway';
import { startMailbox, type Mailbox } from '../../../test/support/mailbox';
import { useGateway } from '../../../test/support/use-gateway';

const NEW_PASSWORD = 'purple-elephant-juggles-quietly-7';
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});
const { gw, owners } = useGateway({ owners: ['alice', 'carol'] });
let mailbox: Mailbox;
let peer: RequestListener;

beforeAll(async () => {
  mailbox = await startMailbox(gw);
  closers.push(() => mailbox.stop());
  // Another gateway of the cluster: same database and key prefix, its own Redis connections.
  const db = createGatewayDb(gw.databaseUrl, { max: 2 });
  const redis = new Redis(requireEnv('TEST_REDIS_URL'), { maxRetriesPerRequest: 2 });
  const subscriber = redis.duplicate();
  peer = createApp({
    config: gw.config,
    db,
    redis,
    subscriber,
    logger: createLogger({ level: 'silent' }),
    masterKey: gw.config.MASTER_KEY,
    dexRegistration: gw.dexRegistration,
    clock: gw.clock,
    redisPrefix: gw.redisPrefix,
    blobStore: gw.blobStore,
  }).app;
  closers.push(async () => {
    subscriber.disconnect();
    redis.disconnect();
    await db.$disconnect();
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
});

const login = (address: string, username: string, password: string, app: RequestListener = gw.app) =>
  request(app).get('/users/access_token').set('Host', address).set('username', username).set('password', password);
const validate = (address: string, token: string, app: RequestListener = gw.app) =>
  request(app).get('/users/access_token/validate').set('Host', address).set('X-Auth-Token', token);
const askReset = (address: string, email: string) =>
  request(gw.app).post('/control/v2/auth/passwordReset').set('Host', address).send({ email });
const confirm = (address: string, token: string, newPassword = NEW_PASSWORD) =>
  request(gw.app).post(`/control/v2/auth/passwordreset/confirm/${token}`).set('Host', address).send({ newPassword });

/** The token of the reset link in a mail (it rides in the console address's fragment). */
function linkToken(text: string): string {
  const match = /\/#\/reset\/([A-Za-z0-9_-]{20,})/.exec(text);
  if (!match) throw new Error(`no reset link in: ${text}`);
  return match[1] as string;
}

/** Milliseconds until `app` refuses the token, polling; fails after 3 s. */
async function msUntilRefused(app: RequestListener, address: string, token: string): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < 3000) {
    if ((await validate(address, token, app)).status === 401) return performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('token still accepted after 3 s');
}

describe('the mail port', () => {
  it('sends a queued message, text and HTML, through the worker over SMTP', async () => {
    await gw.mail.enqueue({ to: 'someone@example.com', subject: 'Hello', text: 'Plain words', html: '<p>Plain words</p>' });
    const mail = await mailbox.next('someone@example.com');
    expect(mail).toMatchObject({ from: `no-reply@${gw.config.CLUSTER_DOMAIN}`, subject: 'Hello', text: 'Plain words' });
    expect(mail.html).toContain('<p>Plain words</p>');
  });
});

describe('password reset by e-mail', () => {
  it('answers the same for any address, and mails a link to the owner only', async () => {
    const alice = owners.alice;
    const known = await askReset(alice.address, 'ALICE@example.com');
    const unknown = await askReset(alice.address, 'mallory@example.com');
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual(known.body);
    expect(known.body).toEqual({ message: RESET_REQUESTED });
    expect(JSON.stringify(known.body)).not.toMatch(/token/i);
    // The original answered the token itself to anyone who asked with sendEmailToUser=false.
    const noMail = await request(gw.app)
      .post('/control/v2/auth/passwordReset?sendEmailToUser=false')
      .set('Host', alice.address)
      .send({ email: 'alice@example.com' });
    expect(noMail.status).toBe(200);
    expect(noMail.body).toEqual({ message: RESET_REQUESTED });
    await mailbox.next('alice@example.com');

    const mail = await mailbox.next('alice@example.com');
    expect(mail.subject).toContain(alice.address);
    expect(mail.html).toContain(`http://${alice.address}`);
    linkToken(mail.text);
    // Give a wrongly sent mail time to arrive, then check none did.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mailbox.messages.filter((m) => m.to.includes('mallory@example.com'))).toHaveLength(0);
    expect(mailbox.pending('alice@example.com')).toHaveLength(0);
    // Only its hash is stored.
    const stored = await gw.db.passwordReset.findMany();
    expect(stored.map((row) => row.tokenHash)).not.toContain(linkToken(mail.text));
  });

  it('sets the password once per link; the old password and every older token stop working, on another gateway within 1 s', async () => {
    const alice = owners.alice;
    const bob = await addUser(gw.app, alice, 'bob');
    expect((await validate(alice.address, alice.token, peer)).status).toBe(200); // the peer has alice cached

    await askReset(alice.address, 'alice@example.com').expect(200);
    const token = linkToken((await mailbox.next('alice@example.com')).text);
    // A weak choice is refused and leaves the link usable.
    expect((await confirm(alice.address, token, 'password')).status).toBe(400);
    const reset = await confirm(alice.address, token);
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({ message: 'Password reset' });
    expect((await validate(alice.address, reset.headers['x-auth-token'] as string)).status).toBe(200);

    expect(await msUntilRefused(peer, alice.address, alice.token)).toBeLessThan(1000);
    expect((await validate(alice.address, alice.token)).status).toBe(401);
    expect((await confirm(alice.address, token, 'another-long-phrase-of-words-9')).status).toBe(401);
    expect((await login(alice.address, 'alice', STRONG_PASSWORD)).status).toBe(401);
    const fresh = await login(alice.address, 'alice', NEW_PASSWORD);
    expect(fresh.status).toBe(200);
    expect((await validate(alice.address, fresh.body.accessToken, peer)).status).toBe(200);
    // Another account's sessions are not touched.
    expect((await validate(alice.address, bob.token, peer)).status).toBe(200);
    owners.alice.token = fresh.body.accessToken;
    owners.alice.password = NEW_PASSWORD;
  });

  it('honours only the latest link, and none after 24 hours', async () => {
    const carol = owners.carol;
    await askReset(carol.address, 'carol@example.com').expect(200);
    const first = linkToken((await mailbox.next('carol@example.com')).text);
    await askReset(carol.address, 'carol@example.com').expect(200);
    const second = linkToken((await mailbox.next('carol@example.com')).text);
    expect((await confirm(carol.address, first)).status).toBe(401);

    gw.clock.advance(24 * 3600 + 1);
    try {
      const late = await confirm(carol.address, second);
      expect(late.status).toBe(401);
      expect(late.body.message).toBe('Invalid Token');
    } finally {
      gw.clock.advance(-(24 * 3600 + 1));
    }
    expect((await login(carol.address, 'carol', STRONG_PASSWORD)).status).toBe(200);
  });

  it('refuses a malformed address, and rate-limits per client address and instance', async () => {
    const carol = owners.carol;
    expect((await askReset(carol.address, 'not-an-address')).status).toBe(400);
    let refused: request.Response | undefined;
    for (let i = 0; i <= gw.config.RESET_RATE_LIMIT && !refused; i++) {
      const res = await askReset(carol.address, 'x@example.com');
      if (res.status !== 200) refused = res;
    }
    expect(refused?.status).toBe(429);
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThan(0);
    // Another instance counts on its own.
    expect((await askReset(owners.alice.address, 'x@example.com')).status).toBe(200);
  });
});

/** POST /control/v2/auth/password on carol's instance with `token`. */
const changePassword = (token: string, body: { password?: string; newPassword: string }) =>
  request(gw.app).post('/control/v2/auth/password').set('Host', owners.carol.address).set('X-Auth-Token', token).send(body);

describe('password change', () => {
  it('needs the current password: a wrong or missing one is 403 and changes nothing', async () => {
    const carol = owners.carol;
    const wrong = await changePassword(carol.token, { password: 'not-my-password-at-all', newPassword: NEW_PASSWORD });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ message: 'Invalid password', cause: 'Old password invalid' });
    const missing = await changePassword(carol.token, { newPassword: NEW_PASSWORD });
    expect(missing.status).toBe(403);
    const weak = await changePassword(carol.token, { password: STRONG_PASSWORD, newPassword: 'simple' });
    expect(weak.status).toBe(400);
    expect((await login(carol.address, 'carol', STRONG_PASSWORD)).status).toBe(200);
    expect((await validate(carol.address, carol.token)).status).toBe(200);
  });

  it('changes a user’s own password, ends their older sessions and hands a token for this one', async () => {
    const carol = owners.carol;
    const dave = await addUser(gw.app, carol, 'dave');
    expect((await validate(carol.address, dave.token, peer)).status).toBe(200);
    const changed = await changePassword(dave.token, { password: STRONG_PASSWORD, newPassword: NEW_PASSWORD });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ message: 'Password changed' });
    expect(await msUntilRefused(peer, carol.address, dave.token)).toBeLessThan(1000);
    expect((await validate(carol.address, changed.headers['x-auth-token'] as string)).status).toBe(200);
    expect((await login(carol.address, 'dave', STRONG_PASSWORD)).status).toBe(401);
    expect((await login(carol.address, 'dave', NEW_PASSWORD)).status).toBe(200);
    expect((await validate(carol.address, carol.token)).status).toBe(200);
  });
});

describe('log out everywhere', () => {
  it('refuses every older token of the account on every gateway within 1 s; a new log-in works at once', async () => {
    const carol = owners.carol;
    const other = (await login(carol.address, 'carol', STRONG_PASSWORD)).body.accessToken as string;
    expect((await validate(carol.address, other, peer)).status).toBe(200);
    const done = await request(gw.app).post('/api/v2.6/auth/logout-everywhere').set('Host', carol.address).set('X-Auth-Token', carol.token);
    expect(done.status).toBe(200);
    expect(await msUntilRefused(peer, carol.address, other)).toBeLessThan(1000);
    expect((await validate(carol.address, carol.token)).status).toBe(401);
    const again = await login(carol.address, 'carol', STRONG_PASSWORD);
    expect(again.status).toBe(200);
    expect((await validate(carol.address, again.body.accessToken, peer)).status).toBe(200);
    owners.carol.token = again.body.accessToken;
  });

  it('ends a session begun in the same second as an earlier password change (the test clock never moves)', async () => {
    const carol = owners.carol;
    const changed = await changePassword(carol.token, { password: STRONG_PASSWORD, newPassword: NEW_PASSWORD });
    expect(changed.status).toBe(200);
    const session = changed.headers['x-auth-token'] as string;
    expect((await validate(carol.address, session)).status).toBe(200);
    const done = await request(gw.app).post('/api/v2.6/auth/logout-everywhere').set('Host', carol.address).set('X-Auth-Token', session);
    expect(done.status).toBe(200);
    expect((await validate(carol.address, session)).status).toBe(401);
    const again = await login(carol.address, 'carol', NEW_PASSWORD);
    expect(again.status).toBe(200);
    expect((await validate(carol.address, again.body.accessToken)).status).toBe(200);
    owners.carol.token = again.body.accessToken;
  });
});
