// A second factor (RFC 6238 TOTP) as an owner and their authenticator app see it: enrol (URI and QR
// code), confirm with a code, and from then on a password alone is refused with 401 asking for the
// code, which the X-Totp header carries (each code once); recovery codes work once each; turning it
// off takes a code.
import * as OTPAuth from 'otpauth';
import request from 'supertest';
import { STRONG_PASSWORD } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';

const { gw, owners } = useGateway({ owners: ['alice'] });
const as = (path: string) => request(gw.app).post(path).set('Host', owners.alice.address).set('X-Auth-Token', owners.alice.token);
const login = (totp?: string) => {
  const req = request(gw.app)
    .get('/users/access_token')
    .set('Host', owners.alice.address)
    .set('username', 'alice')
    .set('password', STRONG_PASSWORD);
  return totp ? req.set('X-Totp', totp) : req;
};
let secret: string;
/** The code an authenticator shows at the gateway's (test) clock, after moving it to the next 30 s step. */
const nextCode = () => {
  gw.clock.advance(30);
  return OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(secret), timestamp: gw.clock().getTime() });
};

describe('two-factor authentication', () => {
  let recoveryCodes: string[];

  it('enrols with an otpauth URI and a QR code, and is on only once a code confirms it', async () => {
    const enrol = await as('/api/v2.6/auth/totp/enrol');
    expect(enrol.status).toBe(200);
    secret = enrol.body.secret;
    expect(enrol.body.uri).toMatch(new RegExp(`^otpauth://totp/${owners.alice.address.replace(/\./g, '\\.')}:alice\\?`));
    expect(enrol.body.uri).toContain(`secret=${secret}`);
    expect(enrol.body.qrCode).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    // Not yet in force: the password alone still logs in; a wrong code does not confirm.
    expect((await login()).status).toBe(200);
    expect((await as('/api/v2.6/auth/totp/confirm').send({ code: '000000' })).status).toBe(400);
    const stored = await gw.db.user.findFirst({ where: { username: 'alice' } });
    expect(stored?.totpSecretEnc).not.toContain(secret);

    const confirmed = await as('/api/v2.6/auth/totp/confirm').send({ code: nextCode() });
    expect(confirmed.status).toBe(200);
    recoveryCodes = confirmed.body.recoveryCodes;
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    const status = await request(gw.app)
      .get('/api/v2.6/auth/totp')
      .set('Host', owners.alice.address)
      .set('X-Auth-Token', owners.alice.token);
    expect(status.body).toEqual({ enabled: true, recoveryCodesLeft: 10 });
    expect((await as('/api/v2.6/auth/totp/enrol')).status).toBe(409);
  });

  it('refuses a password alone with 401 saying a code is needed, and accepts it with a code, once', async () => {
    const alone = await login();
    expect(alone.status).toBe(401);
    expect(alone.body.message).toMatch(/code is needed/);
    expect((await login('123456')).status).toBe(401);
    const code = nextCode();
    const withCode = await login(code);
    expect(withCode.status).toBe(200);
    expect(withCode.body.accessToken).toEqual(expect.any(String));
    expect((await login(code)).status).toBe(401); // a code is good once
    // The GET / log-in form asks the same.
    const form = request(gw.app).get('/').query({ username: 'alice', password: STRONG_PASSWORD }).set('Host', owners.alice.address);
    expect((await form).status).toBe(401);
    const formWithCode = await request(gw.app)
      .get('/')
      .query({ username: 'alice', password: STRONG_PASSWORD })
      .set('Host', owners.alice.address)
      .set('X-Totp', nextCode());
    expect(formWithCode.status).toBe(200);
  });

  it('accepts a recovery code in place of a code, once', async () => {
    const [first] = recoveryCodes;
    expect((await login(first)).status).toBe(200);
    expect((await login(first)).status).toBe(401);
    expect((await login((recoveryCodes[1] as string).toLowerCase().replace('-', ''))).status).toBe(200);
    const status = await request(gw.app)
      .get('/api/v2.6/auth/totp')
      .set('Host', owners.alice.address)
      .set('X-Auth-Token', owners.alice.token);
    expect(status.body.recoveryCodesLeft).toBe(8);
  });

  it('turns off only with a valid code; then the password alone logs in again', async () => {
    expect((await as('/api/v2.6/auth/totp/disable').send({ code: '000000' })).status).toBe(400);
    expect((await as('/api/v2.6/auth/totp/disable').send({ code: nextCode() })).status).toBe(200);
    expect((await login()).status).toBe(200);
  });
});

describe('guessing codes', () => {
  const limited = useGateway({ env: { LOGIN_RATE_LIMIT: '3' }, owners: ['erin'] });

  it('counts codes tried to turn it on or off with the log-in limit: 429 past it, even with a valid token', async () => {
    const { erin } = limited.owners;
    const post = (path: string) => request(limited.gw.app).post(path).set('Host', erin.address).set('X-Auth-Token', erin.token);
    expect((await post('/api/v2.6/auth/totp/enrol')).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post('/api/v2.6/auth/totp/confirm').send({ code: '000000' })).status);
    expect(statuses).toEqual([400, 400, 400, 429]);
  });
});
