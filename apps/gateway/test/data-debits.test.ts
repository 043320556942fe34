// Data debits over time: terms start, roll on, end at cancellation or at the end of a period; new terms
// wait for the owner; bad requests change nothing.
import { callerRequests } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, installApp } from './apps-fixtures';

const { gw, dex, owners, users } = useGateway({ dex: true, owners: ['alice'], users: { carol: 'alice' } });
const { alice } = owners;
const { carol } = users;

const HOUR = 3600;
const owner = () => callerRequests(gw.app, alice, alice.address);
const holder = () => callerRequests(gw.app, carol, alice.address);

function terms(key: string, change: Record<string, unknown> = {}) {
  return {
    dataDebitKey: key,
    purpose: 'Reading my notes',
    start: gw.clock().toISOString(),
    period: HOUR,
    termsUrl: 'https://reader.example/terms',
    cancelAtPeriodEnd: false,
    requestClientName: 'Reader',
    requestClientUrl: 'https://reader.example',
    requestClientLogoUrl: 'https://reader.example/logo.png',
    holderUserId: carol.userId,
    bundle: { name: `${key}-bundle`, bundle: { notes: { endpoints: [{ endpoint: 'notes/items' }] } } },
    ...change,
  };
}

async function register(key: string, change: Record<string, unknown> = {}) {
  await owner().post(`/api/v2.6/data-debit/${key}`).send(terms(key, change)).expect(201);
  await owner().get(`/api/v2.6/data-debit/${key}/enable`).expect(200);
}

const debit = async (key: string) => (await owner().get(`/api/v2.6/data-debit/${key}`)).body;
const values = (key: string) => holder().get(`/api/v2.6/data-debit/${key}/values`);

beforeAll(async () => {
  await owner()
    .post('/api/v2.6/data/notes/items')
    .send([{ n: 1 }, { n: 2 }])
    .expect(201);
});

describe('terms over time', () => {
  it('terms that cancel at period end are active for one period, then end', async () => {
    await register('one-period', { cancelAtPeriodEnd: true });
    const started = await debit('one-period');
    expect(started).toEqual(expect.objectContaining({ active: true, accepted: true }));
    expect(Date.parse(started.end) - Date.parse(started.start)).toBe(HOUR * 1000);
    expect((await values('one-period')).body.bundle.notes.map((r: { data: unknown }) => r.data)).toEqual([{ n: 1 }, { n: 2 }]);
    gw.clock.advance(HOUR + 1);
    expect((await debit('one-period')).active).toBe(false);
    expect((await values('one-period')).status).toBe(400);
  });

  it('rolling terms stay active; disable?atPeriodEnd=true ends them at the end of the running period', async () => {
    await register('rolling');
    gw.clock.advance(1.5 * HOUR);
    expect((await debit('rolling')).active).toBe(true);
    const disabled = (await owner().get('/api/v2.6/data-debit/rolling/disable?atPeriodEnd=true')).body;
    expect(disabled.active).toBe(true);
    expect(Date.parse(disabled.permissionsLatest.end) - Date.parse(disabled.permissionsLatest.start)).toBe(2 * HOUR * 1000);
    gw.clock.advance(0.5 * HOUR + 1);
    expect((await debit('rolling')).active).toBe(false);
    expect((await values('rolling')).status).toBe(400);
  });

  it('terms that start later are not active yet', async () => {
    await register('later', { start: new Date(gw.clock().getTime() + HOUR * 1000).toISOString() });
    expect((await debit('later')).active).toBe(false);
    expect((await values('later')).body).toEqual({ error: 'Bad Request', message: 'Data Debit later not enabled' });
    gw.clock.advance(HOUR);
    expect((await values('later')).status).toBe(200);
  });

  it('new terms (PUT) wait for the owner: the accepted ones stay active until enable switches to the newest', async () => {
    await register('changing');
    const updated = await owner()
      .put('/api/v2.6/data-debit/changing')
      .send(terms('changing', { purpose: 'Reading more' }));
    expect(updated.status).toBe(200);
    expect(updated.body.permissions.map((p: { purpose: string; accepted: boolean }) => [p.purpose, p.accepted])).toEqual([
      ['Reading my notes', true],
      ['Reading more', false],
    ]);
    expect(updated.body).toEqual(expect.objectContaining({ active: true, accepted: false }));
    expect(updated.body.permissionsActive.purpose).toBe('Reading my notes');
    const enabled = (await owner().get('/api/v2.6/data-debit/changing/enable')).body;
    expect(enabled.permissionsActive.purpose).toBe('Reading more');
    expect(enabled.accepted).toBe(true);
  });
});

describe('bad requests change nothing', () => {
  it.each([
    ['a taken key', 'changing', {}, 400],
    ['a holder that is not a user of this instance', 'h1', { holderUserId: '00000000-0000-4000-8000-000000000000' }, 404],
    ['a key in the body that differs from the path', 'h2', { dataDebitKey: 'other' }, 400],
    ['a zero period', 'h3', { period: 0 }, 400],
    ['a terms URL that is not http(s)', 'h4', { termsUrl: 'javascript:alert(1)' }, 400],
    ['no purpose', 'h5', { purpose: '' }, 400],
    ['a bad bundle', 'h6', { bundle: { name: 'x', bundle: {} } }, 400],
  ])('refuses %s', async (_what, key, change, status) => {
    const tables = async () => ({
      debits: await gw.db.dataDebit.findMany(),
      terms: await gw.db.dataDebitPermission.findMany(),
      bundles: await gw.db.dataBundle.findMany(),
    });
    const before = await tables();
    // The same names as the stored debit, with another bundle: a refused request must not touch it.
    const body = {
      ...terms(key),
      bundle: { name: `${key}-bundle`, bundle: { other: { endpoints: [{ endpoint: 'notes/other' }] } } },
      ...change,
    };
    const res = await owner().post(`/api/v2.6/data-debit/${key}`).send(body);
    expect(res.status).toBe(status);
    expect(await tables()).toEqual(before);
  });

  it("refuses an app's account as holder, and unknown debits are 404 on every owner route", async () => {
    const app = await installApp(gw, dex, alice, appRecord('reader'));
    expect(
      (
        await owner()
          .post('/api/v2.6/data-debit/h7')
          .send(terms('h7', { holderUserId: app.userId }))
      ).status,
    ).toBe(404);
    for (const path of ['', '/enable', '/disable', '/values'])
      expect((await owner().get(`/api/v2.6/data-debit/nope${path}`)).status).toBe(404);
    expect((await owner().put('/api/v2.6/data-debit/nope').send(terms('nope'))).status).toBe(404);
  });

  it('answers hostile keys and NUL characters with 404 / 400, never a 500', async () => {
    // A NUL in the path is refused before any route, naming the path (docs/reliability.md).
    for (const path of ['', '/enable', '/disable', '/values'])
      expect((await owner().get(`/api/v2.6/data-debit/a%00b${path}`)).status).toBe(400);
    expect((await owner().get('/api/v2.6/data-bundle/a%00b')).status).toBe(400);
    expect((await owner().get('/api/v2.6/data-bundle/a%zzb')).status).toBe(400);
    const before = await gw.db.dataDebit.count();
    const res = await owner()
      .post('/api/v2.6/data-debit/nul')
      .send(terms('nul', { purpose: 'a\u0000b' }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/NUL/);
    const bundle = {
      name: 'nul',
      bundle: {
        p: { endpoints: [{ endpoint: 'notes/items', filters: [{ field: 'n', operator: { operator: 'contains', value: 'a\u0000' } }] }] },
      },
    };
    expect((await owner().post('/api/v2.6/data-bundle/nul').send(bundle)).status).toBe(400);
    expect(await gw.db.dataDebit.count()).toBe(before);
    expect(await gw.db.dataBundle.count({ where: { name: 'nul' } })).toBe(0);
  });
});
