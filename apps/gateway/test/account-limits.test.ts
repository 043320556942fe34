// Guessing an account's secrets from many addresses: second-factor codes at log-in and reset links are
// limited per client address and, past LOGIN_ACCOUNT_LIMIT failures, per account (AccountLimit): every
// address that failed is refused with 429 and Retry-After, while the owner, from an address that has
// not failed, gets in. The gateway here is reached directly with the default TRUST_PROXY (no proxy is
// believed), each client a source address of its own on the loopback network.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as OTPAuth from 'otpauth';
import request from 'supertest';
import { requestFrom, type Answer } from '../../../test/support/from-address';
import { STRONG_PASSWORD } from '../../../test/support/gateway';
import { startMailbox, type Mailbox } from '../../../test/support/mailbox';
import { useGateway } from '../../../test/support/use-gateway';

/** The contract's limits: 10 tries a minute per client and instance, 20 failures per account per hour. */
const PER_ADDRESS = 10;
const PER_ACCOUNT = 20;
const NEW_PASSWORD = 'a-new-and-long-passphrase-7';

const { gw, owners } = useGateway({
  env: { LOGIN_RATE_LIMIT: String(PER_ADDRESS), LOGIN_ACCOUNT_LIMIT: String(PER_ACCOUNT) },
  owners: ['alice', 'bob', 'carol'],
});
let server: http.Server;
let port: number;
let mailbox: Mailbox;

beforeAll(async () => {
  server = http.createServer(gw.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  mailbox = await startMailbox(gw);
});
afterAll(async () => {
  await mailbox?.stop();
  await new Promise((resolve) => server?.close(resolve));
});

/** Twenty clients, each its own address. */
const clients = (block: number) => Array.from({ length: 20 }, (_, i) => `127.0.${block}.${i + 1}`);
const statusesOf = (answers: Answer[]) => answers.map((a) => a.status);
const expectRetryAfter = (answers: Answer[], atMost: number) => {
  for (const answer of answers) {
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(atMost);
  }
};

describe('with no proxy believed (the default)', () => {
  it('counts a client writing X-Forwarded-For as the address it is', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < PER_ADDRESS + 1; i++) {
      const answer = await requestFrom('127.0.5.1', port, {
        path: '/users/access_token',
        headers: { Host: owners.alice.address, username: 'nobody', password: 'wrong', 'X-Forwarded-For': `203.0.113.${i + 1}` },
      });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([...Array<number>(PER_ADDRESS).fill(401), 429]);
  });
});

describe('second-factor codes at log-in', () => {
  let secret: string;
  const code = () => OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(secret), timestamp: gw.clock().getTime() });
  const login = (from: string, totp?: string) =>
    requestFrom(from, port, {
      path: '/users/access_token',
      headers: { Host: owners.bob.address, username: 'bob', password: STRONG_PASSWORD, ...(totp ? { 'X-Totp': totp } : {}) },
    });

  beforeAll(async () => {
    const as = (path: string) => request(gw.app).post(path).set('Host', owners.bob.address).set('X-Auth-Token', owners.bob.token);
    secret = (await as('/api/v2.6/auth/totp/enrol')).body.secret;
    expect((await as('/api/v2.6/auth/totp/confirm').send({ code: code() })).status).toBe(200);
    // The next code is a new one (each is good once).
    gw.clock.advance(30);
  });

  it('are refused per account to the addresses that guessed wrong, while the owner logs in from another', async () => {
    // Someone who has the password guesses codes, one from each of 20 addresses, then again.
    const wrong = () => String((Number(code()) + 1) % 1_000_000).padStart(6, '0');
    const first = await Promise.all(clients(6).map((from) => login(from, wrong())));
    expect(statusesOf(first)).toEqual(clients(6).map(() => 401));
    const second = await Promise.all(clients(6).map((from) => login(from, wrong())));
    expect(statusesOf(second)).toEqual(clients(6).map(() => 429));
    expectRetryAfter(second, 3600);
    // The right code from an address that failed is refused too: the guess is never looked at.
    expect((await login(clients(6)[0]!, code())).status).toBe(429);
    // The owner, from an address with no failure, gets in with password and code.
    const owner = await login('127.0.6.100', code());
    expect([owner.status, (owner.body as { userId: string }).userId]).toEqual([200, owners.bob.userId]);
  });
});

describe('reset links', () => {
  const confirm = (from: string, address: string, token: string) =>
    requestFrom(from, port, {
      method: 'POST',
      path: `/control/v2/auth/passwordreset/confirm/${token}`,
      headers: { Host: address },
      json: { newPassword: NEW_PASSWORD },
    });
  const guess = () => Buffer.from(Array.from({ length: 32 }, () => Math.floor(Math.random() * 256))).toString('base64url');

  it('are limited per client address: 10 tries a minute, then 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < PER_ADDRESS + 1; i++) statuses.push((await confirm('127.0.7.1', owners.carol.address, guess())).status);
    expect(statuses).toEqual([...Array<number>(PER_ADDRESS).fill(401), 429]);
  });

  it('are refused per instance to the addresses that tried wrong ones, while the owner’s link works from another', async () => {
    const first = await Promise.all(clients(8).map((from) => confirm(from, owners.alice.address, guess())));
    expect(statusesOf(first)).toEqual(clients(8).map(() => 401));
    const second = await Promise.all(clients(8).map((from) => confirm(from, owners.alice.address, guess())));
    expect(statusesOf(second)).toEqual(clients(8).map(() => 429));
    expectRetryAfter(second, 3600);

    const asked = await request(gw.app)
      .post('/control/v2/auth/passwordReset')
      .set('Host', owners.alice.address)
      .send({ email: 'alice@example.com' });
    expect(asked.status).toBe(200);
    const link = /\/#\/reset\/([A-Za-z0-9_-]{20,})/.exec((await mailbox.next('alice@example.com')).text)?.[1];
    // The real link from an address that tried wrong ones is refused (not used up: it still works after).
    expect((await confirm(clients(8)[0]!, owners.alice.address, link!)).status).toBe(429);
    const reset = await confirm('127.0.8.100', owners.alice.address, link!);
    expect([reset.status, reset.body]).toEqual([200, { message: 'Password reset' }]);
  });
});
