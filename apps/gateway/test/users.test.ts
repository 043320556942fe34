import request from 'supertest';
import { callerRequests, addUser, STRONG_PASSWORD } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';

const { gw, owners } = useGateway({ owners: ['alice', 'bob'] });
const { alice, bob } = owners;

const as = (who: { token: string }, host = alice.address) => callerRequests(gw.app, who, host);

describe('owner-managed users', () => {
  it('creates a user (201) who can log in, with the password or pass field', async () => {
    const res = await as(alice).post('/users/user').send({ username: 'carol', email: 'carol@example.com', pass: STRONG_PASSWORD });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      userId: expect.any(String),
      username: 'carol',
      email: 'carol@example.com',
      kind: 'user',
      enabled: true,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const login = await request(gw.app)
      .get('/users/access_token')
      .set('Host', alice.address)
      .set('username', 'carol')
      .set('password', STRONG_PASSWORD);
    expect(login.status).toBe(200);
    expect(login.body.userId).toBe(res.body.userId);
  });

  it('lists users without any password hash', async () => {
    const res = await as(alice).get('/users/user');
    expect(res.status).toBe(200);
    expect(res.body.map((u: { username: string }) => u.username)).toEqual(expect.arrayContaining(['alice', 'carol']));
    expect(JSON.stringify(res.body)).not.toMatch(/scrypt|passwordHash|"pass/);
    // Only this instance's accounts.
    expect(res.body.map((u: { username: string }) => u.username)).not.toContain('bob');
  });

  it('answers 409 for a taken username and 400 naming a bad field', async () => {
    expect((await as(alice).post('/users/user').send({ username: 'carol', password: STRONG_PASSWORD })).status).toBe(409);
    const weak = await as(alice).post('/users/user').send({ username: 'dan', password: '12345678' });
    expect(weak.status).toBe(400);
    expect(weak.body.message).toMatch(/^password: /);
    const bad = await as(alice).post('/users/user').send({ username: 'Not Valid', password: STRONG_PASSWORD });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^username: /);
  });

  it('disables a user: their token and their login stop working at once; enabling restores them', async () => {
    const erin = await addUser(gw.app, alice, 'erin');
    expect((await as(erin).get('/users/access_token/validate')).status).toBe(200);

    const disabled = await as(alice).put(`/users/user/${erin.userId}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.body.enabled).toBe(false);
    expect((await as(erin).get('/users/access_token/validate')).body.cause).toBe('unknown user');
    const login = await request(gw.app)
      .get('/users/access_token')
      .set('Host', alice.address)
      .set('username', 'erin')
      .set('password', erin.password);
    expect(login.status).toBe(401);

    expect((await as(alice).put(`/users/user/${erin.userId}/enable`)).body.enabled).toBe(true);
    expect((await as(erin).get('/users/access_token/validate')).status).toBe(200);
  });

  it('deletes a user', async () => {
    const frank = await addUser(gw.app, alice, 'frank');
    expect((await as(alice).delete(`/users/user/${frank.userId}`)).status).toBe(200);
    expect(await gw.db.user.findFirst({ where: { id: frank.userId } })).toBeNull();
    expect((await as(alice).delete(`/users/user/${frank.userId}`)).status).toBe(404);
  });

  it('protects the owner account', async () => {
    const res = await as(alice).put(`/users/user/${alice.userId}/disable`);
    expect(res.status).toBe(403);
    expect((await gw.db.user.findFirstOrThrow({ where: { id: alice.userId } })).disabled).toBe(false);
  });

  it('answers 404 for an unknown or malformed user id', async () => {
    expect((await as(alice).put('/users/user/00000000-0000-0000-0000-000000000000/disable')).status).toBe(404);
    expect((await as(alice).delete('/users/user/not-a-uuid')).status).toBe(404);
  });

  it("cannot reach another instance's users", async () => {
    const res = await as(alice).put(`/users/user/${bob.userId}/disable`);
    expect(res.status).toBe(404);
    expect((await gw.db.user.findFirstOrThrow({ where: { id: bob.userId } })).disabled).toBe(false);
  });

  it('is for the owner only: users get 403, anonymous callers 401', async () => {
    const gina = await addUser(gw.app, alice, 'gina');
    const before = await gw.db.user.count();
    const forbidden = await as(gina).post('/users/user').send({ username: 'henry', password: STRONG_PASSWORD });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('Forbidden');
    expect((await as(gina).get('/users/user')).status).toBe(403);
    expect(await gw.db.user.count()).toBe(before);
    const anonymous = await request(gw.app).get('/users/user').set('Host', alice.address);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ error: 'Not Authenticated', message: 'Not Authenticated' });
  });

  it("takes a deleted user's grants and file permissions with it", async () => {
    const ivan = await addUser(gw.app, alice, 'ivan');
    const instanceId = (await gw.db.user.findFirstOrThrow({ where: { id: alice.userId } })).instanceId;
    // createMany: Prisma then asks for no RETURNING, whose enum casts a Citus coordinator refuses.
    await gw.db.dataGrant.createMany({ data: { instanceId, userId: ivan.userId, namespace: 'notes', access: 'read' } });
    await gw.db.file.createMany({
      data: {
        instanceId,
        fileId: 'ivanfile',
        name: 'f',
        source: 's',
        uploaderId: alice.userId,
        dateCreated: new Date(),
        lastUpdated: new Date(),
      },
    });
    await gw.db.filePermission.createMany({ data: { instanceId, fileId: 'ivanfile', userId: ivan.userId, contentReadable: true } });
    expect((await as(alice).delete(`/users/user/${ivan.userId}`)).status).toBe(200);
    expect(await gw.db.dataGrant.count({ where: { userId: ivan.userId } })).toBe(0);
    expect(await gw.db.filePermission.count({ where: { userId: ivan.userId } })).toBe(0);
    expect(await gw.db.file.count({ where: { fileId: 'ivanfile' } })).toBe(1);
  });

  it("refuses, in the database itself, a grant naming another instance's user", async () => {
    const instanceId = (await gw.db.user.findFirstOrThrow({ where: { id: alice.userId } })).instanceId;
    await expect(
      gw.db.dataGrant.createMany({ data: { instanceId, userId: bob.userId, namespace: 'notes', access: 'read' } }),
    ).rejects.toMatchObject({
      code: 'P2003',
    });
  });
});
