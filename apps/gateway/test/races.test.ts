// Every place where two requests can create the same row, driven with concurrent calls: each answers
// in the contract (never a 500) and exactly one row exists afterwards.
import request from 'supertest';
import { addUser, callerRequests, CLUSTER, STRONG_PASSWORD } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, push, pushToken } from './apps-fixtures';

const { gw, dex, owners } = useGateway({ dex: true, owners: ['racer'] });
const owner = owners.racer;

const times = <T>(n: number, call: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => call(i)));
const statuses = (answers: { status: number }[]) => answers.map((a) => a.status).sort();

it('sign-up: one 201 and 409s for the same name at once, one instance', async () => {
  const body = {
    fullName: 'Twin Example',
    username: 'twin',
    email: 'twin@example.com',
    pass: STRONG_PASSWORD,
    passRepeat: STRONG_PASSWORD,
  };
  const answers = await times(5, () => request(gw.app).post('/api/signup').set('Host', CLUSTER).send(body));
  expect(statuses(answers)).toEqual([201, 409, 409, 409, 409]);
  expect(await gw.db.instance.count({ where: { address: `twin.${CLUSTER}` } })).toBe(1);
});

it('users: one 201 and 409s for the same username at once, one user', async () => {
  const as = callerRequests(gw.app, owner, owner.address);
  const answers = await times(5, () => as.post('/users/user').send({ username: 'dupe', password: STRONG_PASSWORD }));
  expect(statuses(answers)).toEqual([201, 409, 409, 409, 409]);
  expect(await gw.db.user.count({ where: { username: 'dupe' } })).toBe(1);
});

it('app setup: concurrent setups all succeed with one account and one set of grants', async () => {
  const record = appRecord('racing');
  const pushed = await push(gw.app, owner.address, pushToken(gw, dex, owner.address), 'racing', { version: 1, record });
  expect(pushed.status).toBe(200);
  const as = callerRequests(gw.app, owner, owner.address);
  const answers = await times(5, () => as.post('/api/v2.6/applications/racing/setup'));
  expect(statuses(answers)).toEqual([200, 200, 200, 200, 200]);
  const accounts = await gw.db.user.findMany({ where: { kind: 'application', username: { contains: 'racing' } } });
  expect(accounts).toHaveLength(1);
  const grants = await gw.db.dataGrant.findMany({ where: { userId: accounts[0]?.id } });
  expect(new Set(grants.map((g) => `${g.namespace}/${g.endpoint}/${g.access}`)).size).toBe(grants.length);
});

it('data grants: the same grant at once is stored once', async () => {
  const user = await addUser(gw.app, owner, 'granted');
  const as = callerRequests(gw.app, owner, owner.address);
  const answers = await times(5, () => as.post('/api/v2.6/data-grants').send({ userId: user.userId, namespace: 'shared', access: 'read' }));
  expect(statuses(answers)).toEqual([201, 201, 201, 201, 201]);
  expect(await gw.db.dataGrant.count({ where: { userId: user.userId, namespace: 'shared' } })).toBe(1);
});

it('file permissions: the same allowAccess at once leaves one permission row', async () => {
  const user = await addUser(gw.app, owner, 'reader');
  const as = callerRequests(gw.app, owner, owner.address);
  const upload = await as.post('/api/v2.6/files/upload').send({ name: 'race.txt', source: 'test' });
  expect(upload.status).toBe(200);
  const fileId = upload.body.fileId as string;
  const answers = await times(5, () => as.get(`/api/v2.6/files/allowAccess/${fileId}/${user.userId}?content=true`));
  expect(statuses(answers)).toEqual([200, 200, 200, 200, 200]);
  expect(await gw.db.filePermission.count({ where: { fileId, userId: user.userId } })).toBe(1);
});

it('uploads: the same name at once gets distinct file ids', async () => {
  const as = callerRequests(gw.app, owner, owner.address);
  const answers = await times(5, () => as.post('/api/v2.6/files/upload').send({ name: 'same.txt', source: 'race' }));
  expect(statuses(answers)).toEqual([200, 200, 200, 200, 200]);
  expect(new Set(answers.map((a) => a.body.fileId)).size).toBe(5);
});
