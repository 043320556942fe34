// The event stream across gateways (Last-Event-ID resume, visibility) and the owner's activity log.
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Gateway } from '@pds/gateway';
import { callerRequests } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { staticDexKey } from '../src/apps/dex-keys';
import { appRecord, installApp } from './apps-fixtures';
import { uploadFile } from './files-support';
import { startPeer } from './peer-gateway';

let b: { gateway: Gateway; server: Server; close(): Promise<void> };
afterAll(() => b.close());
const { gw, dex, owners, users } = useGateway({ dex: true, owners: ['alice'], users: { carol: 'alice' } });
const { alice } = owners;
const { carol } = users;

const as = (who: { token: string }) => callerRequests(gw.app, who, alice.address);

/** Gateway B: another gateway process of the cluster (same database), serving on a port of its own. */
async function peer() {
  const { gateway, close } = startPeer(gw, { dexKeys: staticDexKey(dex.publicKey) });
  const server = http.createServer(gateway.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    gateway,
    server,
    close: async () => {
      gateway.endStreams();
      await new Promise((resolve) => server.close(resolve));
      await close();
    },
  };
}

interface Received {
  id: string;
  event: string;
  data: { seq: number; type: string; object: Record<string, unknown>; actor: { kind: string; id: string } };
  at: number;
}

/** An SSE client on gateway B (or on another server); `events` fills as they arrive. */
async function stream(token: string, lastEventId?: string, server: Server = b.server) {
  const events: Received[] = [];
  const port = (server.address() as AddressInfo).port;
  const headers: Record<string, string> = { Host: alice.address, 'X-Auth-Token': token };
  if (lastEventId) headers['Last-Event-ID'] = lastEventId;
  let buffered = '';
  const req = http.get({ host: '127.0.0.1', port, path: '/api/v2.6/events', headers });
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => req.on('response', resolve).on('error', reject));
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const fields = Object.fromEntries(
        block
          .split('\n')
          .filter((line) => line && !line.startsWith(':'))
          .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
      );
      if (fields.data)
        events.push({ id: fields.id ?? '', event: fields.event ?? '', data: JSON.parse(fields.data), at: performance.now() });
    }
  });
  res.on('error', () => undefined);
  return { events, close: () => req.destroy() };
}

async function until(check: () => boolean, ms = 3000) {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > ms) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 600));

beforeAll(async () => {
  b = await peer();
});

describe('the event stream', () => {
  it('delivers a change made on gateway A to a stream on gateway B within 1 s, then resumes exactly after Last-Event-ID', async () => {
    const live = await stream(alice.token);
    await settle();
    const wrote = performance.now();
    const created = await as(alice).post('/api/v2.6/data/notes/items').send({ n: 1 }).expect(201);
    await until(() => live.events.length === 1);
    const latency = live.events[0]!.at - wrote;
    process.stderr.write(`event stream: a change on gateway A reached gateway B's stream in ${latency.toFixed(0)} ms\n`);
    expect(latency).toBeLessThan(1000);
    expect(live.events[0]).toMatchObject({
      event: 'record.created',
      data: {
        type: 'record.created',
        actor: { kind: 'owner', id: alice.userId },
        object: { namespace: 'notes', endpoint: 'items', recordId: created.body.recordId },
      },
    });
    expect(live.events[0]!.data).not.toHaveProperty('address');
    live.close();

    const lastSeen = live.events[0]!.id;
    await as(alice)
      .post('/api/v2.6/data/notes/items')
      .send([{ n: 2 }, { n: 3 }])
      .expect(201);
    const resumed = await stream(alice.token, lastSeen);
    await until(() => resumed.events.length >= 2);
    await settle();
    expect(resumed.events.map((e) => Number(e.id))).toEqual([Number(lastSeen) + 1, Number(lastSeen) + 2]);
    resumed.close();
  });

  it('shows another account only the tables its grants let it read', async () => {
    const carols = await stream(carol.token);
    await settle();
    await as(alice).post('/api/v2.6/data/diary/days').send({ secret: true }).expect(201);
    await settle();
    expect(carols.events).toEqual([]);

    await as(alice).post('/api/v2.6/data-grants').send({ userId: carol.userId, namespace: 'notes', access: 'read' }).expect(201);
    await as(alice).post('/api/v2.6/data/diary/days').send({ secret: true }).expect(201);
    await as(alice).post('/api/v2.6/data/notes/items').send({ shared: true }).expect(201);
    await until(() => carols.events.length === 1);
    await settle();
    expect(carols.events.map((e) => [e.data.type, e.data.object.namespace])).toEqual([['record.created', 'notes']]);
    carols.close();
  });

  it('streams through express alone too (the dispatcher hands it what it does not take)', async () => {
    const server = http.createServer(b.gateway.express);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const live = await stream(alice.token, undefined, server);
      await settle();
      await as(alice).post('/api/v2.6/data/notes/items').send({ via: 'express' }).expect(201);
      await until(() => live.events.length === 1);
      expect(live.events[0]!.data.type).toBe('record.created');
      live.close();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a stream without a token', async () => {
    const port = (b.server.address() as AddressInfo).port;
    const status = await new Promise<number>((resolve) =>
      http.get({ host: '127.0.0.1', port, path: '/api/v2.6/events', headers: { Host: alice.address } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }),
    );
    expect(status).toBe(401);
  });
});

describe('the activity log', () => {
  it("lists an app's read of debit values and a user's read of a file's content, with actor, names, time and address", async () => {
    const start = new Date(Date.now() - 1000).toISOString();
    // An app that reads notes/items holds a debit over it, enabled at setup.
    const app = await installApp(gw, dex, alice, appRecord('reader', { dataRead: ['notes/items'] }));
    await as(app).get('/api/v2.6/data-debit/app-reader/values').expect(200);

    const file = await uploadFile(gw, alice, { name: 'report.txt', source: 'test' });
    await as(alice).get(`/api/v2.6/files/allowAccess/${file.fileId}/${carol.userId}?content=true`).expect(200);
    await as(carol).get(`/api/v2.6/files/content/${file.fileId}`).expect(303);

    // Reads are written in batches, once a second.
    await until(() => false, 1500).catch(() => undefined);
    const log = await as(alice).get(`/api/v2.6/activity?since=${start}&type=debit.`).expect(200);
    expect(log.body).toContainEqual({
      kind: 'read',
      type: 'debit.values',
      // An app's account is named by the app's title.
      actor: { kind: 'application', id: app.userId, name: 'The reader app' },
      object: { debitKey: 'app-reader' },
      names: {},
      address: expect.any(String),
      times: 1,
      time: expect.any(String),
    });
    const changes = log.body.filter((e: { kind: string }) => e.kind === 'change').map((e: { type: string }) => e.type);
    expect(changes).toEqual(['debit.enabled']);

    const byCarol = await as(alice).get(`/api/v2.6/activity?actor=${carol.userId}`).expect(200);
    // Newest first: the content read, then her log-in when the test began; the file by its name.
    expect(byCarol.body).toEqual([
      expect.objectContaining({
        kind: 'read',
        type: 'file.content',
        object: { fileId: file.fileId },
        names: { [file.fileId]: 'report.txt' },
        actor: { kind: 'user', id: carol.userId, name: 'carol' },
      }),
      expect.objectContaining({ kind: 'read', type: 'login', actor: { kind: 'user', id: carol.userId, name: 'carol' } }),
    ]);
    // The owner's share names the file and the account it was shared with.
    const shared = await as(alice).get(`/api/v2.6/activity?since=${start}&type=file.shared`).expect(200);
    expect(shared.body[0]).toMatchObject({
      actor: { kind: 'owner', id: alice.userId, name: 'alice' },
      names: { [file.fileId]: 'report.txt', [carol.userId]: 'carol' },
    });
    const time = Date.parse(byCarol.body[0].time);
    expect(Math.abs(time - Date.now())).toBeLessThan(10_000);
  });

  it('counts identical reads within a second in one entry: times, and the records read added up', async () => {
    const app = await installApp(gw, dex, alice, appRecord('counter', { dataRead: ['notes/items'] }));
    await as(alice)
      .post('/api/v2.6/data/notes/items')
      .send([{ n: 1 }, { n: 2 }])
      .expect(201);
    for (let i = 0; i < 3; i++) await as(app).get('/api/v2.6/data/notes/items?take=2').expect(200);
    await until(() => false, 1500).catch(() => undefined);
    const log = await as(alice).get(`/api/v2.6/activity?actor=${app.userId}&type=records.read`).expect(200);
    // Three reads noted within a few milliseconds: one entry, or two when a write of the log fell between.
    expect(log.body.length).toBeGreaterThanOrEqual(1);
    expect(log.body.length).toBeLessThanOrEqual(2);
    const sum = (of: (e: { times: number; object: { count: number } }) => number) => log.body.reduce((n: number, e: never) => n + of(e), 0);
    expect(sum((e) => e.times)).toBe(3);
    expect(sum((e) => e.object.count)).toBe(6);
    expect(log.body[0].object).toEqual({ namespace: 'notes', endpoint: 'items', count: expect.any(Number) });
  });

  it('keeps failed log-ins, and is the owner’s alone', async () => {
    await as(alice).get('/users/access_token').set('username', 'alice').set('password', 'wrong-password-1').expect(401);
    await until(() => false, 1500).catch(() => undefined);
    const log = await as(alice).get('/api/v2.6/activity?type=login.failed').expect(200);
    expect(log.body[0]).toMatchObject({ kind: 'read', type: 'login.failed', object: { username: 'alice' } });
    await as(carol).get('/api/v2.6/activity').expect(403);
    await as(alice).get('/api/v2.6/activity?take=0').expect(400);
    await as(alice).get('/api/v2.6/activity?since=yesterday').expect(400);
  });
});
