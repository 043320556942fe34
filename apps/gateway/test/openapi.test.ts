// The OpenAPI document: valid 3.1, current in docs/, complete for every mounted route, and true about
// the bodies that the main endpoints answer (each checked with ajv against its documented schema).
import { readFileSync } from 'node:fs';
import request, { type Response } from 'supertest';
import { gatewayOpenApi } from '@pds/gateway';
import { OPENAPI_FILES, serialise } from '../../../scripts/openapi';
import { addUser, CLUSTER, STRONG_PASSWORD } from '../../../test/support/gateway';
import { documentedRoutes, declaredRoutes, openApiProblems, responseChecker } from '../../../test/support/openapi';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, pushToken } from './apps-fixtures';

describe('the gateway OpenAPI document', () => {
  const { gw, dex, owners } = useGateway({ dex: true, owners: ['alice'] });
  const { alice } = owners;
  const doc = gatewayOpenApi() as Parameters<typeof documentedRoutes>[0];
  const check = responseChecker(doc);
  const problems: string[] = [];
  /** Records any difference between the response and the document, and hands the response on. */
  const seen = async (pending: PromiseLike<Response>): Promise<Response> => {
    const res = await pending;
    problems.push(...check(res));
    return res;
  };

  it('is valid OpenAPI 3.1 with schemas ajv compiles', () => {
    expect(openApiProblems(doc)).toEqual([]);
  });

  it('is what docs/openapi.json holds (run `pnpm openapi` after changing a route declaration)', () => {
    expect(JSON.parse(readFileSync(OPENAPI_FILES.gateway, 'utf8'))).toEqual(JSON.parse(serialise(doc)));
  });

  it('describes every route the gateway serves, and no route it does not', () => {
    const mounted = declaredRoutes(gw.routes);
    expect(mounted.length).toBeGreaterThan(25);
    expect(mounted.filter((route) => !documentedRoutes(doc).includes(route))).toEqual([]);
    expect(documentedRoutes(doc).filter((route) => !mounted.includes(route))).toEqual([]);
  });

  it('is served at /api/openapi.json on any Host, without a token', async () => {
    for (const host of [CLUSTER, alice.address, 'unknown.example']) {
      const res = await seen(request(gw.app).get('/api/openapi.json').set('Host', host));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(JSON.parse(JSON.stringify(doc)));
    }
  });

  it('matches what the main endpoints answer, errors included', async () => {
    const host = alice.address;
    const as = (token: string) => ({
      get: (path: string) => seen(request(gw.app).get(path).set('Host', host).set('X-Auth-Token', token)),
      post: (path: string, body?: object) => seen(request(gw.app).post(path).set('Host', host).set('X-Auth-Token', token).send(body)),
      put: (path: string, body?: object) => seen(request(gw.app).put(path).set('Host', host).set('X-Auth-Token', token).send(body)),
      delete: (path: string, body?: object) => seen(request(gw.app).delete(path).set('Host', host).set('X-Auth-Token', token).send(body)),
    });
    const owner = as(alice.token);

    // Sign-up (201 and 409), login, validation and the instance root.
    await seen(
      request(gw.app)
        .post('/api/signup')
        .set('Host', CLUSTER)
        .send({ fullName: 'Carol Example', username: 'carol', email: 'c@example.com', pass: STRONG_PASSWORD, passRepeat: STRONG_PASSWORD }),
    );
    await seen(
      request(gw.app)
        .post('/api/signup')
        .set('Host', CLUSTER)
        .send({ fullName: 'Carol Example', username: 'carol', email: 'c@example.com', pass: STRONG_PASSWORD, passRepeat: STRONG_PASSWORD }),
    );
    await seen(request(gw.app).post('/api/signup').set('Host', CLUSTER).send({ username: 'x' }));
    await seen(request(gw.app).get('/users/access_token').set('Host', host).set('username', 'alice').set('password', STRONG_PASSWORD));
    await seen(request(gw.app).get('/users/access_token').set('Host', host).set('username', 'alice').set('password', 'wrong'));
    await owner.get('/users/access_token/validate');
    await seen(request(gw.app).get('/').set('Host', host));
    await seen(request(gw.app).get(`/?access_token=${alice.token}`).set('Host', host));
    expect((await seen(request(gw.app).get('/publickey').set('Host', host))).text).toContain('BEGIN PUBLIC KEY');

    // Accounts.
    const bob = await addUser(gw.app, alice, 'bob');
    await owner.post('/users/user', { username: 'dave', password: STRONG_PASSWORD });
    await owner.post('/users/user', { username: 'Not Valid' });
    const users = await owner.get('/users/user');
    const dave = (users.body as { username: string; userId: string }[]).find((u) => u.username === 'dave')!;
    await owner.put(`/users/user/${dave.userId}/disable`);
    await owner.put(`/users/user/${dave.userId}/enable`);
    await owner.delete(`/users/user/${dave.userId}`);
    await as(bob.token).get('/users/user');

    // Files: the three steps, reads, grants, search, content.
    const upload = await owner.post('/api/v2.6/files/upload', { name: 'doc.txt', source: 'openapi', tags: ['t'], title: 'A doc' });
    const fileId = upload.body.fileId as string;
    const address = new URL(upload.body.contentUrl as string);
    await seen(
      request(gw.app)
        .put(address.pathname)
        .set('Host', host)
        .set('x-amz-server-side-encryption', 'AES256')
        .set('Content-Type', 'text/plain')
        .send('hello'),
    );
    await seen(request(gw.app).put(address.pathname).set('Host', host).set('Content-Type', 'text/plain').send('hello'));
    await owner.put(`/api/v2.6/files/file/${fileId}/complete`);
    await owner.get(`/api/v2.6/files/file/${fileId}`);
    await owner.get('/api/v2.6/files/file/no-such-file');
    await owner.get(`/api/v2.6/files/allowAccess/${fileId}/${bob.userId}?content=true`);
    await owner.get(`/api/v2.6/files/restrictAccess/${fileId}/${bob.userId}`);
    await owner.post(`/api/v2.6/files/allowAccess/${bob.userId}`, { source: 'openapi' });
    await owner.post(`/api/v2.6/files/restrictAccess/${bob.userId}`, { source: 'openapi' });
    await owner.get(`/api/v2.6/files/allowAccessPublic/${fileId}`);
    await owner.get(`/api/v2.6/files/restrictAccessPublic/${fileId}`);
    await owner.post('/api/v2.6/files/search?take=10', { tags: ['t'] });
    await owner.post('/api/v2.6/files/search?take=0', {});
    const content = await owner.get(`/api/v2.6/files/content/${fileId}`);
    expect(content.status).toBe(303);
    await seen(
      request(gw.app)
        .get(new URL(content.headers.location as string).pathname)
        .set('Host', host),
    );

    // Applications: a push signed by dex's key, set-up, its token, its data.
    await seen(
      request(gw.app)
        .put('/api/dex/applications/notes')
        .set('Host', host)
        .set('X-Auth-Token', pushToken(gw, dex, host))
        .send({ version: 1, record: appRecord('notes') }),
    );
    await seen(
      request(gw.app)
        .put('/api/dex/applications/notes')
        .set('Host', host)
        .set('X-Auth-Token', 'not-a-token')
        .send({ version: 1, record: appRecord('notes') }),
    );
    await owner.get('/api/v2.6/applications');
    await owner.get('/api/v2.6/applications/notes');
    await owner.post('/api/v2.6/applications/notes/setup');
    const appToken = (await owner.get('/api/v2.6/applications/notes/access-token')).body.accessToken as string;
    const app = as(appToken);
    await app.post('/api/v2.6/data/notes/items', { title: 'one' });
    await app.post('/api/v2.6/data/notes/items', [{ title: 'two' }, { title: 'three' }]);
    await app.post('/api/v2.6/data/other/items', { title: 'not its namespace' });
    await owner.get('/api/v2.6/data/notes/items?orderBy=title&take=2');
    await owner.get('/api/v2.6/data/notes/items?take=-1');
    await owner.delete('/api/v2.6/data/notes/items');
    await owner.get('/api/v2.6/applications/notes/disable');

    // Data grants for a plain user.
    const grant = { userId: bob.userId, namespace: 'notes', endpoint: 'items', access: 'read' };
    await owner.post('/api/v2.6/data-grants', grant);
    await owner.get(`/api/v2.6/data-grants?userId=${bob.userId}`);
    await owner.delete('/api/v2.6/data-grants', grant);
    await owner.delete('/api/v2.6/data-grants', grant);

    expect(problems).toEqual([]);
  });
});
