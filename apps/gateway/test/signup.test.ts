import { Worker } from 'bullmq';
import request from 'supertest';
import { addressOf, CLUSTER, STRONG_PASSWORD } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';

const { gw } = useGateway();

const valid = (username: string) => ({
  fullName: 'Alice Example',
  username,
  email: `${username}@example.com`,
  pass: STRONG_PASSWORD,
  passRepeat: STRONG_PASSWORD,
});

describe('POST /api/signup', () => {
  it('creates the instance, its owner and a queued dex registration', async () => {
    const res = await request(gw.app).post('/api/signup').set('Host', CLUSTER).send(valid('alice'));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ instance: addressOf('alice'), userId: expect.any(String), accessToken: expect.any(String) });

    const instance = await gw.db.instance.findUniqueOrThrow({ where: { address: 'alice.pds.test' }, include: { users: true } });
    expect(instance.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(instance.privateKeyEnc).not.toMatch(/PRIVATE KEY/);
    expect(instance.users).toEqual([expect.objectContaining({ id: res.body.userId, kind: 'owner', username: 'alice' })]);
    expect(instance.users[0]?.passwordHash).toMatch(/^scrypt\$/);

    const job = await gw.dexRegistration.queue.getJob('register-alice.pds.test');
    expect(job?.data).toEqual({ address: 'alice.pds.test' });
  });

  it('queues a new registration even when an earlier one for the address has finished', async () => {
    // A retained finished job with the same id would otherwise swallow the new one (a re-created
    // instance, or a fresh database sharing Redis with an older cluster).
    // BullMQ leaves a connection it is given open on close: the test closes its own.
    const connection = gw.redis.duplicate({ maxRetriesPerRequest: null });
    const worker = new Worker('dex-registration', async () => undefined, { connection, prefix: gw.redisPrefix });
    try {
      await request(gw.app).post('/api/signup').set('Host', CLUSTER).send(valid('hank')).expect(201);
      const first = await gw.dexRegistration.queue.getJob('register-hank.pds.test');
      for (let i = 0; i < 100 && !(await first?.isCompleted()); i++) await new Promise((r) => setTimeout(r, 50));
      expect(await first?.isCompleted()).toBe(true);
      await worker.pause();
      // …Many: Prisma then asks for no RETURNING, whose enum casts a Citus coordinator refuses on the reference table Instance.
      await gw.db.instance.deleteMany({ where: { address: 'hank.pds.test' } });

      await request(gw.app).post('/api/signup').set('Host', CLUSTER).send(valid('hank')).expect(201);
      const again = await gw.dexRegistration.queue.getJob('register-hank.pds.test');
      expect(await again?.getState()).toBe('waiting');
    } finally {
      await worker.close();
      connection.disconnect();
    }
  });

  it('accepts a sign-up sent to the would-be instance address', async () => {
    const res = await request(gw.app).post('/api/signup').set('Host', 'carol.pds.test').send(valid('carol'));
    expect(res.status).toBe(201);
    expect(res.body.instance).toBe('carol.pds.test');
  });

  it('answers 409 for an address that is taken, and changes nothing', async () => {
    await request(gw.app).post('/api/signup').set('Host', CLUSTER).send(valid('dave')).expect(201);
    const before = await gw.db.user.count();
    const res = await request(gw.app)
      .post('/api/signup')
      .set('Host', CLUSTER)
      .send({ ...valid('dave'), email: 'other@example.com' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'Conflict', message: 'The instance dave.pds.test already exists' });
    expect(await gw.db.user.count()).toBe(before);
  });

  it.each([
    ['fullName', { fullName: '' }],
    ['fullName', { fullName: undefined }],
    ['username', { username: 'Bad_Name' }],
    ['username', { username: 'ab' }],
    ['username', { username: '1abc' }],
    ['username', { username: 'abc-' }],
    ['username', { username: 'admin' }],
    ['username', { username: 'www' }],
    ['email', { email: 'not-an-email' }],
    ['email', { email: undefined }],
    ['pass', { pass: 'short', passRepeat: 'short' }],
    ['pass', { pass: 'password123', passRepeat: 'password123' }],
    ['passRepeat', { passRepeat: 'something-else-entirely-99' }],
  ])('answers 400 naming %s for %j, and creates nothing', async (field, change) => {
    const res = await request(gw.app)
      .post('/api/signup')
      .set('Host', CLUSTER)
      .send({ ...valid('erin'), ...change });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Bad Request');
    expect(res.body.message).toMatch(new RegExp(`(^|; )${field}: `));
    expect(await gw.db.instance.count({ where: { address: 'erin.pds.test' } })).toBe(0);
  });

  it('says the password rule in the message', async () => {
    const res = await request(gw.app)
      .post('/api/signup')
      .set('Host', CLUSTER)
      .send({ ...valid('erin'), pass: 'qwerty', passRepeat: 'qwerty' });
    expect(res.body.message).toContain('pass: must be 8 to 256 characters and not a common or easily guessed password');
  });

  it('answers 400 for malformed JSON', async () => {
    const res = await request(gw.app).post('/api/signup').set('Host', CLUSTER).set('Content-Type', 'application/json').send('{"username":');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Bad Request', message: 'Body is not valid JSON' });
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const res = await request(gw.app)
      .post('/api/signup')
      .set('Host', CLUSTER)
      .send({ ...valid('frank'), fullName: 'x'.repeat(1024 * 1024 + 10) });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('Payload Too Large');
  });

  it('refuses a sign-up for another address sent to an instance address', async () => {
    const res = await request(gw.app).post('/api/signup').set('Host', 'alice.pds.test').send(valid('mallory'));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^username: /);
  });

  it('answers 404 for a host outside the cluster', async () => {
    const res = await request(gw.app).post('/api/signup').set('Host', 'evil.example').send(valid('grace'));
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('Not Found');
  });
});
