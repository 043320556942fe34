// Webhooks: subscribed on the app's origin only, delivered signed (checked with /publickey alone), only
// what the app may read, in order and at least once through a receiver outage and a worker's kill -9.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import request from 'supertest';
import { loadConfigFor } from '@pds/config';
import { createGatewayDb } from '@pds/db';
import { blockingRedis } from '@pds/queue';
import { createLogger, type Stoppable } from '@pds/runtime';
import { callerRequests, CLUSTER, requireEnv } from '../../../test/support/gateway';
import { eventually } from '../../../test/support/eventually';
import { useGateway } from '../../../test/support/use-gateway';
import { verifyBody, SIGNATURE_HEADER } from '../src/events/signature';
import { isPrivateAddress, webhookDelivery } from '../src/jobs/webhook-delivery';
import { startGatewayWorker } from '../src/worker';
import { appRecord, installApp } from './apps-fixtures';

const root = path.resolve(__dirname, '../../..');

interface Delivery {
  path: string;
  key: string;
  signature: string;
  body: string;
  event: { seq: number; type: string; object: Record<string, unknown> };
  at: number;
}

/** The apps' receiver: keeps what it is sent; `mode` makes it refuse (an outage) or hold requests unanswered. */
const receiver = {
  deliveries: [] as Delivery[],
  mode: 'up' as 'up' | 'down' | 'hold',
  server: http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (receiver.mode === 'hold') {
        receiver.held += 1;
        return;
      }
      if (receiver.mode === 'down') return void res.writeHead(503).end();
      receiver.deliveries.push({
        path: req.url ?? '',
        key: String(req.headers['idempotency-key']),
        signature: String(req.headers[SIGNATURE_HEADER]),
        body,
        event: JSON.parse(body),
        at: performance.now(),
      });
      res.writeHead(204).end();
    });
  }),
  held: 0,
  origin: '',
  to: (at: string) => receiver.deliveries.filter((d) => d.path === at),
};

const { gw, dex, owners } = useGateway({ dex: true, owners: ['alice'] });
const { alice } = owners;
const owner = () => callerRequests(gw.app, alice, alice.address);

let stopDelivery: () => Promise<void>;

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.origin = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
  stopDelivery = startDelivery();
});
afterAll(async () => {
  await stopDelivery();
  receiver.server.closeAllConnections();
  await new Promise((resolve) => receiver.server.close(resolve));
});

/** The gateway worker's delivery, in this process, over the test gateway's database and queue prefix. */
function startDelivery(): () => Promise<void> {
  const db = createGatewayDb(gw.databaseUrl, { max: 3 });
  const connection = blockingRedis({ url: requireEnv('TEST_REDIS_URL') });
  const delivery = webhookDelivery(
    db,
    { connection, prefix: gw.redisPrefix },
    { masterKey: gw.config.MASTER_KEY as Buffer, allowPrivate: true, maxBackoffMs: 2000 },
    createLogger({ level: 'silent' }),
  );
  const stopScan = delivery.scan();
  return async () => {
    stopScan();
    await delivery.worker.close(true);
    await delivery.producer.queue.obliterate({ force: true }).catch(() => undefined);
    await delivery.producer.close();
    connection.disconnect();
    await db.$disconnect();
  };
}

async function subscribe(app: { appId: string; token: string }, at: string, body: object = {}) {
  const res = await callerRequests(gw.app, app, alice.address)
    .post(`/api/v2.6/applications/${app.appId}/webhooks`)
    .send({ url: `${receiver.origin}${at}`, ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string };
}

let notes: Awaited<ReturnType<typeof installApp>>;
let other: Awaited<ReturnType<typeof installApp>>;

describe('webhooks', () => {
  beforeAll(async () => {
    notes = await installApp(gw, dex, alice, appRecord('notes', { url: `${receiver.origin}/` }));
    other = await installApp(gw, dex, alice, appRecord('other', { url: `${receiver.origin}/` }));
  });

  it('refuses an address off the app’s certified origin (400), and another app’s token (403)', async () => {
    const as = callerRequests(gw.app, notes, alice.address);
    for (const url of ['https://evil.example/hook', 'http://127.0.0.1:1/hook', 'not a url']) {
      const res = await as.post('/api/v2.6/applications/notes/webhooks').send({ url });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('Bad Request');
    }
    const foreign = await callerRequests(gw.app, other, alice.address)
      .post('/api/v2.6/applications/notes/webhooks')
      .send({ url: `${receiver.origin}/x` });
    expect(foreign.status).toBe(403);
    expect((await as.get('/api/v2.6/applications/notes/webhooks')).body).toEqual([]);
  });

  it('delivers a record-created event within 2 s, signed so that /publickey verifies it; an app without a read grant gets nothing', async () => {
    await subscribe(notes, '/notes');
    await subscribe(other, '/other');
    const wrote = performance.now();
    const created = await owner().post('/api/v2.6/data/notes/items').send({ n: 1 }).expect(201);
    await eventually(async () => receiver.to('/notes').length === 1, 2000);
    expect(receiver.to('/notes')[0]!.at - wrote).toBeLessThan(2000);

    const [delivery] = receiver.to('/notes');
    expect(delivery!.event).toMatchObject({
      type: 'record.created',
      object: { namespace: 'notes', endpoint: 'items', recordId: created.body.recordId },
    });
    expect(delivery!.key).toBe(
      `${(await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address } })).id}:${delivery!.event.seq}`,
    );
    const publicKey = (await request(gw.app).get('/publickey').set('Host', alice.address).expect(200)).text;
    expect(verifyBody(delivery!.body, delivery!.signature, publicKey)).toBe(true);
    expect(verifyBody(delivery!.body.replace('record.created', 'record.deleted'), delivery!.signature, publicKey)).toBe(false);

    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.to('/other')).toEqual([]);
  });

  it('holds events while the receiver is down for 30 s, then delivers every one, in order, none twice', async () => {
    const start = receiver.to('/notes').length;
    receiver.mode = 'down';
    for (let n = 0; n < 3; n++) await owner().post('/api/v2.6/data/notes/items').send({ down: n }).expect(201);
    await eventually(async () => {
      const [hook] = (await owner().get('/api/v2.6/applications/notes/webhooks')).body;
      return hook.state === 'retrying' ? hook : undefined;
    }, 5000);
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    receiver.mode = 'up';
    await eventually(async () => receiver.to('/notes').length >= start + 3, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = receiver.to('/notes').slice(start);
    expect(after.map((d) => d.event.object)).toEqual([0, 1, 2].map(() => expect.objectContaining({ namespace: 'notes' })));
    expect(new Set(receiver.to('/notes').map((d) => d.key)).size).toBe(receiver.to('/notes').length);
    const seqs = after.map((d) => d.event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const [hook] = (await owner().get('/api/v2.6/applications/notes/webhooks')).body;
    expect(hook).toMatchObject({ state: 'ok', lastError: null, failingSince: null });
  }, 60_000);

  it('knows private, loopback and link-local addresses, which deliveries refuse by default', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '0.0.0.0',
    ])
      expect([address, isPrivateAddress(address)]).toEqual([address, true]);
    for (const address of ['93.184.216.34', '2606:2800:220:1::1', '8.8.8.8'])
      expect([address, isPrivateAddress(address)]).toEqual([address, false]);
  });

  it('lists and removes subscriptions (the owner too)', async () => {
    const listed = (await owner().get('/api/v2.6/applications/other/webhooks').expect(200)).body;
    expect(listed).toEqual([expect.objectContaining({ url: `${receiver.origin}/other`, state: 'ok', events: [], namespaces: [] })]);
    await owner().delete(`/api/v2.6/applications/other/webhooks/${listed[0].id}`).expect(200);
    await owner().delete(`/api/v2.6/applications/other/webhooks/${listed[0].id}`).expect(404);
    expect((await owner().get('/api/v2.6/applications/other/webhooks')).body).toEqual([]);
  });
});

describe('kill -9 of the worker with deliveries owed', () => {
  let child: ChildProcess | undefined;
  let worker: Stoppable | undefined;
  afterAll(async () => {
    child?.kill('SIGKILL');
    await worker?.close();
  });

  it('loses none: the next worker delivers every event', async () => {
    // The in-process delivery stops; a real worker process takes over.
    await stopDelivery();
    stopDelivery = async () => undefined;
    const env: Record<string, string> = {
      LOG_LEVEL: 'silent',
      CLUSTER_DOMAIN: CLUSTER,
      DATABASE_URL: gw.databaseUrl,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      QUEUE_PREFIX: gw.redisPrefix,
      DEX_URL: 'http://127.0.0.1:9',
      MASTER_KEY: (gw.config.MASTER_KEY as Buffer).toString('hex'),
      DATA_DIR: gw.config.DATA_DIR,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_MAX_BACKOFF: '1',
    };
    const start = receiver.to('/notes').length;
    receiver.mode = 'hold';
    receiver.held = 0;
    child = spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', 'apps/gateway/src/worker-main.ts'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    for (let n = 0; n < 5; n++) await owner().post('/api/v2.6/data/notes/items').send({ owed: n }).expect(201);
    // The worker is mid-delivery (the receiver holds the request) when it dies.
    await eventually(async () => receiver.held > 0, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}; the worker said: ${stderr.slice(0, 2000)}`);
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child?.once('exit', resolve));
    child = undefined;
    receiver.mode = 'up';

    worker = await startGatewayWorker(loadConfigFor('gateway-worker', env));
    await eventually(async () => receiver.to('/notes').length >= start + 5, 20_000);
    // At least once: the event in flight when the worker died may come again, with the same key.
    const owed = receiver.to('/notes').slice(start);
    const byKey = new Map(owed.map((d) => [d.key, (d.event.object as { recordId: string }).recordId]));
    expect(byKey.size).toBe(5);
    expect(new Set(byKey.values()).size).toBe(5);
  }, 60_000);
});
