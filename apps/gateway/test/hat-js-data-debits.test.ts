// dataDebits() of the published client, unchanged: the owner lists and reads debits, the holder reads
// the bundle's records only while the debit is active (400 not enabled, 404 unknown, 403 anyone else).
import type { DataDebit } from '@dataswift/hat-js/lib/interfaces/data-debit.interface';
import { callerRequests } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, installApp } from './apps-fixtures';
import { failure, hatClient, serveForHatJs } from './hat-js-support';

const { gw, dex, owners, users } = useGateway({ dex: true, owners: ['alice'], users: { carol: 'alice' } });
const { alice } = owners;
const { carol } = users;
let served: { close(): Promise<void> };
let notes: { token: string; userId: string };
let diary: { token: string; userId: string };

const owner = () => callerRequests(gw.app, alice, alice.address);

const debitRequest = (holderUserId: string) => ({
  dataDebitKey: 'carol-steps',
  purpose: 'Coaching',
  start: '2026-01-01T00:00:00.000Z',
  period: 3600,
  termsUrl: 'https://coach.example/terms',
  cancelAtPeriodEnd: false,
  requestClientName: 'Coach',
  requestClientUrl: 'https://coach.example',
  requestClientLogoUrl: 'https://coach.example/logo.png',
  holderUserId,
  bundle: {
    name: 'steps-high',
    bundle: {
      steps: {
        endpoints: [
          { endpoint: 'fitness/steps', filters: [{ field: 'count', operator: { operator: 'between', lower: 5000, upper: 100000 } }] },
        ],
        orderBy: 'count',
        ordering: 'descending',
        limit: 2,
      },
    },
  },
});

beforeAll(async () => {
  served = await serveForHatJs(gw);
  notes = await installApp(gw, dex, alice, appRecord('notes', { dataRead: ['fitness/steps'] }));
  diary = await installApp(gw, dex, alice, appRecord('diary'));
  await owner()
    .post('/api/v2.6/data/fitness/steps')
    .send([{ count: 1200 }, { count: 9000 }, { count: 15000 }, { count: 7000 }])
    .expect(201);
  await owner().post('/api/v2.6/data/fitness/sleep').send({ hours: 8 }).expect(201);
});
afterAll(() => served.close());

describe('hat-js dataDebits()', () => {
  it("getDataDebitValues gives an app its setup debit's bundle: the tables its record reads", async () => {
    const res = await hatClient(notes.token).dataDebits().getDataDebitValues<{ count: number }>('app-notes');
    expect(res.status).toBe(200);
    const steps = res.parsedBody?.bundle['fitness/steps'] ?? [];
    expect(steps.map((r) => r.data.count)).toEqual([1200, 9000, 15000, 7000]);
    expect(steps[0]).toEqual({ endpoint: 'fitness/steps', recordId: expect.any(String), data: { count: 1200 } });
    expect(Object.keys(res.parsedBody?.bundle ?? {})).toEqual(['fitness/steps']);
  });

  it('getAll, getAllDefault and getById give the owner the debits in the original shape', async () => {
    await owner().post('/api/v2.6/data-debit/carol-steps').send(debitRequest(carol.userId)).expect(201);
    const all = (await hatClient(alice.token).dataDebits().getAll({})).parsedBody as DataDebit[];
    expect(all.map((d) => d.dataDebitKey)).toEqual(['app-notes', 'carol-steps']);
    expect((await hatClient(alice.token).dataDebits().getAllDefault()).parsedBody).toEqual(all);
    const app = all[0] as DataDebit;
    expect(app).toEqual(
      expect.objectContaining({
        requestClientName: 'The notes app',
        requestClientUrl: 'https://notes.example/',
        requestApplicationId: 'notes',
        accepted: true,
        active: true,
      }),
    );
    expect(app.permissionsActive).toEqual(
      expect.objectContaining({
        accepted: true,
        active: true,
        period: 30 * 24 * 3600,
        cancelAtPeriodEnd: false,
        bundle: expect.objectContaining({ name: 'app-notes' }),
      }),
    );
    const coach = (await hatClient(alice.token).dataDebits().getById('carol-steps')).parsedBody as DataDebit;
    expect(coach).toEqual(
      expect.objectContaining({ dataDebitKey: 'carol-steps', accepted: false, active: false, requestClientName: 'Coach' }),
    );
    expect(coach.permissionsActive).toBeUndefined();
    expect(coach.permissionsLatest).toEqual(
      expect.objectContaining({
        purpose: 'Coaching',
        start: '2026-01-01T00:00:00.000Z',
        period: 3600,
        accepted: false,
        active: false,
        termsUrl: 'https://coach.example/terms',
      }),
    );
    expect(coach.permissionsLatest?.bundle.name).toBe('steps-high');
    expect(await gw.db.dataDebitPermission.count({ where: { debitKey: 'carol-steps' } })).toBe(1);
  });

  it('getDataDebitValues: 400 until the owner enables the debit, then the filtered, ordered, limited bundle', async () => {
    const holder = hatClient(carol.token).dataDebits();
    const before = await failure(holder.getDataDebitValues('carol-steps'));
    expect(before.status).toBe(400);
    await owner().get('/api/v2.6/data-debit/carol-steps/enable').expect(200);
    expect((await gw.db.dataDebitPermission.findFirstOrThrow({ where: { debitKey: 'carol-steps' } })).accepted).toBe(true);
    const res = await holder.getDataDebitValues<{ count: number }>('carol-steps');
    expect(res.parsedBody?.bundle.steps?.map((r) => r.data.count)).toEqual([15000, 9000]);
    expect((await holder.getById('carol-steps')).parsedBody).toEqual(expect.objectContaining({ active: true }));
  });

  it('getDataDebitValues: 404 for an unknown debit, 403 for anyone but its holder (and the owner)', async () => {
    expect((await failure(hatClient(carol.token).dataDebits().getDataDebitValues('nope'))).status).toBe(404);
    expect((await failure(hatClient(diary.token).dataDebits().getDataDebitValues('app-notes'))).status).toBe(403);
    expect((await failure(hatClient(notes.token).dataDebits().getDataDebitValues('carol-steps'))).status).toBe(403);
    expect((await failure(hatClient(carol.token).dataDebits().getById('app-notes'))).status).toBe(403);
    expect((await failure(hatClient(carol.token).dataDebits().getAll({}))).status).toBe(403);
    expect((await hatClient(alice.token).dataDebits().getDataDebitValues('carol-steps')).status).toBe(200);
  });

  it('getDataDebitValues: 400 again once the owner disables it (or disables the app)', async () => {
    await owner().get('/api/v2.6/data-debit/carol-steps/disable').expect(200);
    expect((await failure(hatClient(carol.token).dataDebits().getDataDebitValues('carol-steps'))).status).toBe(400);
    expect((await gw.db.dataDebitPermission.findFirstOrThrow({ where: { debitKey: 'carol-steps' } })).canceledAt).not.toBeNull();
    await owner().get('/api/v2.6/applications/notes/disable').expect(200);
    // The app's token stops with the app; the debit itself is no longer active either.
    expect((await failure(hatClient(notes.token).dataDebits().getDataDebitValues('app-notes'))).status).toBe(401);
    expect(((await hatClient(alice.token).dataDebits().getById('app-notes')).parsedBody as DataDebit).active).toBe(false);
  });
});
