import type { SignedUp } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, dexKeyPair, push, pushToken } from './apps-fixtures';

const { gw, dex, owners } = useGateway({ dex: true, owners: ['alice', 'bob'] });
const { alice, bob } = owners;

async function stored(owner: SignedUp, appId: string) {
  const instance = await gw.db.instance.findUniqueOrThrow({ where: { address: owner.address } });
  return gw.db.application.findUnique({ where: { instanceId_appId: { instanceId: instance.id, appId } } });
}

describe('PUT /api/dex/applications/:appId (dex pushes)', () => {
  it('stores a valid push for the addressed instance only, with defaults filled', async () => {
    const res = await push(gw.app, alice.address, pushToken(gw, dex, alice.address), 'notes', { version: 3, record: appRecord('notes') });
    expect(res.status).toBe(200);
    // Not set up yet: dex learns so from the answer (its console can push to the instances that have it set up).
    expect(res.body).toEqual({ message: 'Stored', appId: 'notes', version: 3, setUp: false });
    const row = await stored(alice, 'notes');
    expect(row?.version).toBe(3);
    expect(row?.setup).toBe(false);
    expect(row?.record).toEqual(expect.objectContaining({ id: 'notes', namespace: 'notes', dataRead: [], browser: false, authUrl: '' }));
    expect(await stored(bob, 'notes')).toBeNull();
  });

  it('replaces the record with a newer version and ignores an older one (200, unchanged)', async () => {
    const token = () => pushToken(gw, dex, alice.address);
    await push(gw.app, alice.address, token(), 'cal', { version: 2, record: appRecord('cal', { title: 'Calendar v2' }) }).expect(200);
    await push(gw.app, alice.address, token(), 'cal', { version: 5, record: appRecord('cal', { title: 'Calendar v5' }) }).expect(200);
    const late = await push(gw.app, alice.address, token(), 'cal', { version: 4, record: appRecord('cal', { title: 'Calendar v4' }) });
    expect(late.status).toBe(200);
    expect(late.body.message).toMatch(/^Ignored/);
    const row = await stored(alice, 'cal');
    expect(row?.version).toBe(5);
    expect((row?.record as { title: string }).title).toBe('Calendar v5');
  });

  it.each([
    ['no token', () => undefined],
    ['a token for another instance', () => pushToken(gw, dex, bob.address)],
    ['a token with another scope', () => pushToken(gw, dex, alice.address, { scope: 'app-read' })],
    ['a token from another issuer', () => pushToken(gw, dex, alice.address, { issuer: 'not-dex' })],
    ['an expired token', () => pushToken(gw, dex, alice.address, { at: Math.floor(gw.clock().getTime() / 1000) - 3600, ttlSeconds: 120 })],
    ['the owner’s own instance token', () => alice.token],
    ['garbage', () => 'not.a.jwt'],
  ])('answers 401 for %s and stores nothing', async (_what, token) => {
    const t = token();
    const req = push(gw.app, alice.address, '', 'evil', { version: 1, record: appRecord('evil') });
    const res = await (t ? req.set('X-Auth-Token', t) : req.unset('X-Auth-Token'));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Not Authenticated', message: 'Not Authenticated' });
    expect(await stored(alice, 'evil')).toBeNull();
  });

  it('answers 401 for a token signed with a key that is not dex’s', async () => {
    const other = await dexKeyPair();
    const res = await push(gw.app, alice.address, pushToken(gw, other, alice.address), 'evil', { version: 1, record: appRecord('evil') });
    expect(res.status).toBe(401);
    expect(await stored(alice, 'evil')).toBeNull();
  });

  it.each([
    [
      'a record that fails validation',
      'bad',
      { version: 1, record: appRecord('bad', { category: 'spaceship' as 'app' }) },
      /record\.category: /,
    ],
    ['a path id that differs from the record id', 'other', { version: 1, record: appRecord('bad') }, /record\.id: /],
    ['a missing version', 'bad', { record: appRecord('bad') }, /version: /],
  ])('answers 400 for %s', async (_what, appId, body, message) => {
    const res = await push(gw.app, alice.address, pushToken(gw, dex, alice.address), appId, body);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(message);
    expect(await stored(alice, appId)).toBeNull();
  });
});
