// A whole cluster for dex and worker tests: a real gateway listening on a port, dex on its own
// database copied from the migrated template, both domain workers, and fake instances (a tiny real HTTP server
// whose keys and answers a test controls). Everything shares one private queue prefix. `close()` in afterAll.
import { randomBytes } from 'node:crypto';
import http, { type Server } from 'node:http';
import { loadConfigFor, type ClusterConfig, type Env } from '@pds/config';
import { startDex, startDexWorker, type RunningDex } from '@pds/dex';
import { startGatewayWorker } from '@pds/gateway';
import { listen } from '@pds/runtime';
import { appPushProducer, keyFetchProducer, Producer, QUEUE_NAMES } from '@pds/queue';
import { generateRsaKeyPair, issueToken, signingKeys, type AccessScope, type SigningKeys } from '@pds/tokens';
import { freePort } from '../../scripts/lib/ports';
import { CLUSTER, requireEnv, startTestGateway, type TestGateway } from './gateway';
import { testDexDb, type TestDexDb } from './database';
import { createDatabaseFrom } from './templates';

export { eventually } from './eventually';

/** The cluster domain of the fake instances. */
export const PEER_CLUSTER = 'peer.test';
export const ADMIN = `boss.${CLUSTER}`;

/** Instances served by a tiny HTTP server: each has a key pair the test may swap, and can be made to fail. */
export class FakeInstances {
  readonly keys = new Map<string, SigningKeys & { pem: string }>();
  /** Every request received, as `METHOD host path`. */
  readonly requests: string[] = [];
  /** PUT bodies per address. */
  readonly pushes = new Map<string, unknown[]>();
  /** Status to answer instead of serving (e.g. 503), per address. */
  readonly failWith = new Map<string, number>();
  /** Addresses whose owner has the pushed app set up (their answers to a push say so). */
  readonly setUp = new Set<string>();

  constructor(
    readonly server: Server,
    readonly url: string,
  ) {}

  async add(address: string): Promise<SigningKeys & { pem: string }> {
    const pair = await generateRsaKeyPair();
    const keys = { ...signingKeys(pair.keyId, pair.privateKeyPem), pem: pair.publicKeyPem };
    this.keys.set(address, keys);
    return keys;
  }

  /** An owner token of the fake instance (or a user's or app's, by `scope`), signed with its current key. */
  ownerToken(address: string, scope: AccessScope = 'owner'): string {
    const keys = this.keys.get(address);
    if (!keys) throw new Error(`no fake instance ${address}`);
    return issueToken(keys, { issuer: address, subject: randomBytes(8).toString('hex'), accessScope: scope }, Math.floor(Date.now() / 1000))
      .token;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function startFakeInstances(): Promise<FakeInstances> {
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').split(':')[0] ?? '';
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Requests only arrive after `fake` below is set.
      const f = fake;
      f.requests.push(`${req.method} ${host} ${req.url}`);
      const failure = f.failWith.get(host);
      const keys = f.keys.get(host);
      if (failure) return void res.writeHead(failure).end();
      if (!keys) return void res.writeHead(404).end();
      if (req.method === 'GET' && req.url === '/publickey') return void res.writeHead(200, { 'Content-Type': 'text/plain' }).end(keys.pem);
      if (req.method === 'PUT' && req.url?.startsWith('/api/dex/applications/')) {
        const list = f.pushes.get(host) ?? [];
        list.push({ token: req.headers['x-auth-token'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        f.pushes.set(host, list);
        return void res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ message: 'Stored', setUp: f.setUp.has(host) }));
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const fake = new FakeInstances(server, `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
  return fake;
}

export interface TestCluster {
  gw: TestGateway;
  gatewayUrl: string;
  dex: RunningDex;
  dexUrl: string;
  /** Dex's database, with Prisma's models for assertions. */
  dexDb: TestDexDb;
  fakes: FakeInstances;
  /** Configuration of dex and worker (queue prefix shared with the gateway's producer). */
  config: ClusterConfig;
  /** Producers on the same prefix, for inspecting queues (and the scheduled upload sweep). */
  keyFetch: Producer<'dex-key-fetch'>;
  appPush: Producer<'app-push'>;
  uploadSweep: Producer<'upload-sweep'>;
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  /** Stops and restarts the gateway's listener on the same port (an outage as the worker sees it). */
  stopGateway(): Promise<void>;
  startGateway(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestCluster(
  options: {
    worker?: boolean;
    registerWaitMs?: number;
    /** Settings of dex and the worker to override. */ env?: Partial<Record<keyof Env, string>>;
    /** Settings the gateway and the worker share (its blob store: the worker removes objects from it too). */
    shared?: Partial<Record<keyof Env, string>>;
  } = {},
): Promise<TestCluster> {
  const [dexPort, gatewayPort] = [await freePort(), await freePort()];
  const dexUrl = `http://127.0.0.1:${dexPort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const gw = await startTestGateway({ DEX_URL: dexUrl, ...options.shared });
  const fakes = await startFakeInstances();
  const database = await createDatabaseFrom(requireEnv('TEST_PG_ADMIN_URL'), requireEnv('TEST_DEX_TEMPLATE'));
  const config = loadConfigFor('cluster', {
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    CLUSTER_DOMAIN: CLUSTER,
    DATABASE_URL: gw.databaseUrl,
    DEX_DATABASE_URL: database.url,
    REDIS_URL: requireEnv('TEST_REDIS_URL'),
    // The gateway's: the worker's upload sweep removes bytes from the same local store.
    MASTER_KEY: gw.config.MASTER_KEY.toString('hex'),
    DATA_DIR: gw.config.DATA_DIR,
    DEX_PORT: String(dexPort),
    DEX_URL: dexUrl,
    DEX_CLUSTERS: `${CLUSTER},${PEER_CLUSTER}`,
    DEX_ADMINS: ADMIN,
    CLUSTER_GATEWAYS: `${CLUSTER}=${gatewayUrl},${PEER_CLUSTER}=${fakes.url}`,
    QUEUE_PREFIX: gw.redisPrefix,
    REGISTER_RATE_LIMIT: '1000',
    ...options.shared,
    ...options.env,
  });
  const dex = await startDex(config, { registerWaitMs: options.registerWaitMs });
  const dexDb = testDexDb(database.url, { max: 2 });
  const queue = { connection: gw.redis, prefix: gw.redisPrefix };
  const keyFetch = keyFetchProducer(queue);
  const appPush = appPushProducer(queue);
  const uploadSweep = new Producer(QUEUE_NAMES.uploadSweep, queue);

  let server: Server | undefined;
  const startGateway = async () => {
    server = await listen(gw.app, gatewayPort, '127.0.0.1');
  };
  const stopGateway = async () => {
    const s = server;
    server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  let workers: { close(): Promise<void> }[] = [];
  const cluster: TestCluster = {
    gw,
    gatewayUrl,
    dex,
    dexUrl,
    dexDb,
    fakes,
    config,
    keyFetch,
    appPush,
    uploadSweep,
    startWorker: async () => {
      if (workers.length === 0) workers = [await startGatewayWorker(config), await startDexWorker(config)];
    },
    stopWorker: async () => {
      for (const w of workers) await w.close();
      workers = [];
    },
    stopGateway,
    startGateway,
    close: async () => {
      for (const w of workers) await w.close();
      await dex.close();
      await stopGateway();
      await fakes.close();
      for (const p of [keyFetch, appPush, uploadSweep]) {
        await p.queue.obliterate({ force: true }).catch(() => undefined);
        await p.close();
      }
      await dexDb.$disconnect();
      await database.drop();
      await gw.close();
    },
  };
  await startGateway();
  if (options.worker ?? true) await cluster.startWorker();
  return cluster;
}
