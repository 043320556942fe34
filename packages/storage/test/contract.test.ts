// One contract, every adapter, each behind a real gateway: the local store (the gateway listening), and S3
// on the server test/global-setup.ts provides (Swift with s3api unless TEST_S3_ENDPOINT names another) and
// on two independent, replicated implementations (test/support/replicated-s3.ts): Swift with a 3-replica
// ring and Ceph's RADOS Gateway over three OSDs, each with one replica killed mid-run.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http, { type Server } from 'node:http';
import type { LookupFunction } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import request from 'supertest';
import { FileRepository } from '@pds/db';
import type { S3Settings } from '../../../scripts/lib/s3';
import { CLUSTER, requireEnv, signUp, startTestGateway, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { REPLICATED_S3, replicatedS3, type ReplicatedS3 } from '../../../test/support/replicated-s3';
import { tamperAt } from '../../../test/support/tamper';
import {
  BLOB_ROUTE,
  objectKey,
  removeOrphans,
  S3BlobStore,
  SSE_HEADER,
  SSE_VALUE,
  trashKey,
  type BlobStore,
  type PresignOptions,
} from '../src';

const SSE = { [SSE_HEADER]: SSE_VALUE };
const MAX_UPLOAD_BYTES = 1_000_000;

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One real HTTP request. Instance addresses (`*.pds.test`) do not resolve, so they are dialled at
 * 127.0.0.1 while the Host header keeps the address, as a DNS wildcard would.
 */
function send(url: string, method: 'PUT' | 'GET', headers: Record<string, string> = {}, body?: Buffer | Buffer[]): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const lookup: LookupFunction = (_host, options, callback) =>
      options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
    const req = http.request(url, { method, headers, ...(new URL(url).hostname.endsWith(`.${CLUSTER}`) ? { lookup } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    // An array is sent chunked (no Content-Length), as a client streaming a body of unknown size would;
    // a buffer in one piece, so it carries Content-Length, which S3 requires of a PUT (411 without).
    if (Array.isArray(body)) for (const chunk of body) req.write(chunk);
    req.end(Array.isArray(body) ? undefined : body);
  });
}

interface Subject {
  gw: TestGateway;
  alice: SignedUp;
  store: BlobStore;
  presign: PresignOptions;
  /** Status the store answers a PUT without the SSE header. */
  missingSseStatus: number;
  /** Alters the signature of an address, keeping its shape. */
  tamper(url: string): string;
  /** The key of a new file (status New) of alice's: the local store takes no bytes for a key without one. */
  newKey(): Promise<string>;
  /** The same address and signature, naming another object key. */
  retarget(url: string, from: string, to: string): string;
  close(): Promise<void>;
}

/** Starts an upload of a file of alice's: its fileId and signed upload address. */
async function startUpload(gw: TestGateway, alice: SignedUp): Promise<{ fileId: string; contentUrl: string }> {
  const res = await request(gw.app)
    .post('/api/v2.6/files/upload')
    .set('Host', alice.address)
    .set('X-Auth-Token', alice.token)
    .send({ name: `f${randomBytes(6).toString('hex')}.bin`, source: 'contract' });
  if (res.status !== 200) throw new Error(`upload of a test file failed: ${res.status}`);
  return res.body as { fileId: string; contentUrl: string };
}

async function localSubject(): Promise<Subject & { server: Server }> {
  const gw = await startTestGateway({ STORAGE: 'local', MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) });
  const alice = await signUp(gw.app, 'alice');
  const server = await new Promise<Server>((resolve) => {
    const s = http.createServer(gw.app).listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as { port: number };
  return {
    gw,
    alice,
    server,
    store: gw.blobStore,
    presign: { ttlSeconds: 300, baseUrl: `http://${alice.address}:${port}` },
    missingSseStatus: 400,
    newKey: async () => objectKey(alice.address, (await startUpload(gw, alice)).fileId),
    tamper: (url) => tamperAt(url),
    retarget: (url, from, to) => {
      const [base, token] = url.split(`${BLOB_ROUTE}/`) as [string, string];
      const [payload, signature] = token.split('.') as [string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { k: string };
      expect(claims.k).toBe(from);
      const forged = Buffer.from(JSON.stringify({ ...claims, k: to })).toString('base64url');
      return `${base}${BLOB_ROUTE}/${forged}.${signature}`;
    },
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await gw.close();
    },
  };
}

interface S3Subject extends Subject {
  bucket: string;
  replicated?: ReplicatedS3;
}

async function s3Subject(settings: Required<S3Settings>, replicated?: ReplicatedS3): Promise<S3Subject> {
  // Gateways of a run reuse instance addresses (alice.pds.test): each gets a bucket of its own.
  const bucket = `pds-contract-${randomBytes(6).toString('hex')}`;
  const gw = await startTestGateway({
    STORAGE: 's3',
    S3_ENDPOINT: settings.endpoint,
    S3_ACCESS_KEY: settings.accessKey,
    S3_SECRET_KEY: settings.secretKey,
    S3_REGION: settings.region,
    S3_BUCKET: bucket,
    MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES),
  });
  const alice = await signUp(gw.app, 'alice');
  return {
    gw,
    alice,
    bucket,
    replicated,
    store: gw.blobStore,
    presign: { ttlSeconds: 300, baseUrl: `http://${alice.address}` },
    // The SSE header is signed: without it the signature does not match.
    missingSseStatus: 403,
    newKey: async () => objectKey(alice.address, (await startUpload(gw, alice)).fileId),
    tamper: (url) => url.replace(/(X-Amz-Signature=[0-9a-f]*)[0-9a-f]/, (_, head: string) => `${head}${url.endsWith('0') ? '1' : '0'}`),
    retarget: (url, from, to) => url.replace(encodeURI(from), encodeURI(to)),
    close: () => gw.close(),
  };
}

const globalS3 = (): Required<S3Settings> => ({
  endpoint: requireEnv('TEST_S3_ENDPOINT'),
  accessKey: requireEnv('TEST_S3_ACCESS_KEY'),
  secretKey: requireEnv('TEST_S3_SECRET_KEY'),
  region: requireEnv('TEST_S3_REGION'),
});

// Asked for when the file loads: they take seconds to start, and come up while the first subjects run.
// Where a server's package is missing, its runs are skipped, and said so.
const replicatedServers = REPLICATED_S3.flatMap((server) => {
  const missing = server.missing();
  if (missing) {
    process.stdout.write(`\nstorage contract on ${server.name} skipped: ${missing}\n`);
    return [];
  }
  const starting = replicatedS3(server);
  starting.catch(() => undefined); // reported by the beforeAll that awaits it
  return [{ name: server.name, starting }];
});

/** [name, start, whether it keeps replicas a test may kill] */
type Case<T> = [string, () => Promise<T>, boolean];

const S3_SUBJECTS: Case<S3Subject>[] = [
  ['s3 (swift)', () => s3Subject(globalS3()), false],
  ...replicatedServers.map(({ name, starting }): Case<S3Subject> => [
    `s3 (${name})`,
    async () => {
      const server = await starting;
      return s3Subject(server.settings, server);
    },
    true,
  ]),
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Long enough for Ceph to start (≈ 20 s alone, longer on a busy machine) and to notice a killed OSD.
const START_TIMEOUT = 180_000;

const SUBJECTS: Case<Subject | S3Subject>[] = [['local', localSubject, false], ...S3_SUBJECTS];

describe.each(SUBJECTS)('BlobStore contract: %s', (_name, start, replicated) => {
  let s: Subject | S3Subject;

  beforeAll(async () => {
    s = await start();
  }, START_TIMEOUT);
  afterAll(() => s?.close());

  it('stores the bytes PUT to a signed address and serves them back byte for byte', async () => {
    const key = await s.newKey();
    const bytes = randomBytes(300_001);
    const put = await send(await s.store.presignPut(key, s.presign), 'PUT', { ...SSE, 'Content-Type': 'image/png' }, bytes);
    expect(put.status).toBe(200);
    expect(await s.store.stat(key)).toBe(bytes.length);
    const got = await send(await s.store.presignGet(key, s.presign), 'GET');
    expect(got.status).toBe(200);
    expect(got.body.equals(bytes)).toBe(true);
  });

  it('answers a signed GET with the content type and disposition it was signed with, and without them as stored', async () => {
    const key = await s.newKey();
    const bytes = Buffer.from('%PDF-1.4 not really');
    expect(
      (await send(await s.store.presignPut(key, s.presign), 'PUT', { ...SSE, 'Content-Type': 'application/octet-stream' }, bytes)).status,
    ).toBe(200);
    const disposition = `attachment; filename="tax 2025.pdf"; filename*=UTF-8''tax%202025.pdf`;
    const named = await send(
      await s.store.presignGet(key, { ...s.presign, response: { contentType: 'application/pdf', disposition } }),
      'GET',
    );
    expect([named.status, named.headers['content-type'], named.headers['content-disposition']]).toEqual([
      200,
      'application/pdf',
      disposition,
    ]);
    expect(named.body.equals(bytes)).toBe(true);
    const plain = await send(await s.store.presignGet(key, s.presign), 'GET');
    expect([plain.headers['content-type'], plain.headers['content-disposition']]).toEqual(['application/octet-stream', undefined]);
  });

  it('stores an empty object', async () => {
    const key = await s.newKey();
    expect((await send(await s.store.presignPut(key, s.presign), 'PUT', SSE, Buffer.alloc(0))).status).toBe(200);
    expect(await s.store.stat(key)).toBe(0);
    const got = await send(await s.store.presignGet(key, s.presign), 'GET');
    expect(got.status).toBe(200);
    expect(got.body.length).toBe(0);
  });

  // Mid-run on the replicated servers: every later test of the subject runs with one replica dead.
  if (replicated)
    it(
      'keeps three encrypted copies of an object, and with one replica killed serves it and stores new ones',
      async () => {
        const { bucket, replicated } = s as S3Subject & { replicated: ReplicatedS3 };
        const plaintext = Buffer.from('a recognisable secret sentence. '.repeat(1000));
        const before = await s.newKey();
        expect((await send(await s.store.presignPut(before, s.presign), 'PUT', SSE, plaintext)).status).toBe(200);
        const held = await replicated.stored(bucket, before);
        expect(held.copies).toBe(3);
        expect(held.bytes.length).toBeGreaterThanOrEqual(plaintext.length);
        expect(held.bytes.includes('recognisable secret')).toBe(false);

        await replicated.stopOneReplica();
        const got = await send(await s.store.presignGet(before, s.presign), 'GET');
        expect(got.status).toBe(200);
        expect(got.body.equals(plaintext)).toBe(true);
        const after = await s.newKey();
        const bytes = randomBytes(100_000);
        expect((await send(await s.store.presignPut(after, s.presign), 'PUT', SSE, bytes)).status).toBe(200);
        expect(await s.store.stat(after)).toBe(bytes.length);
        expect((await send(await s.store.presignGet(after, s.presign), 'GET')).body.equals(bytes)).toBe(true);
        expect((await replicated.stored(bucket, after)).copies).toBe(2);
      },
      START_TIMEOUT,
    );

  it('refuses a PUT without the server-side encryption header and stores nothing', async () => {
    const key = await s.newKey();
    const put = await send(await s.store.presignPut(key, s.presign), 'PUT', {}, randomBytes(100));
    expect(put.status).toBe(s.missingSseStatus);
    expect(await s.store.stat(key)).toBeNull();
  });

  it('refuses a PUT naming another encryption', async () => {
    const key = await s.newKey();
    const put = await send(await s.store.presignPut(key, s.presign), 'PUT', { [SSE_HEADER]: 'aws:kms' }, randomBytes(100));
    // Swift answers 501 NotImplemented for SSE-KMS before it checks the signature.
    expect([400, 403, 501]).toContain(put.status);
    expect(await s.store.stat(key)).toBeNull();
  });

  it('answers 403 to tampered addresses', async () => {
    const key = await s.newKey();
    const put = await send(s.tamper(await s.store.presignPut(key, s.presign)), 'PUT', SSE, randomBytes(100));
    expect(put.status).toBe(403);
    expect(await s.store.stat(key)).toBeNull();

    await send(await s.store.presignPut(key, s.presign), 'PUT', SSE, randomBytes(100));
    expect((await send(s.tamper(await s.store.presignGet(key, s.presign)), 'GET')).status).toBe(403);
  });

  it('answers 403 to an address used for another object', async () => {
    const key = await s.newKey();
    const other = await s.newKey();
    const url = await s.store.presignPut(key, s.presign);
    const forOther = s.retarget(url, key, other);
    expect(forOther).not.toBe(url);
    expect((await send(forOther, 'PUT', SSE, randomBytes(10))).status).toBe(403);
    expect(await s.store.stat(other)).toBeNull();
  });

  it('answers 403 to expired addresses', async () => {
    const key = await s.newKey();
    const ttl = { ...s.presign, ttlSeconds: 1 };
    const putUrl = await s.store.presignPut(key, ttl);
    expect((await send(await s.store.presignPut(key, s.presign), 'PUT', SSE, randomBytes(10))).status).toBe(200);
    const getUrl = await s.store.presignGet(key, ttl);
    // S3 counts expiry in whole seconds from X-Amz-Date.
    await sleep(2500);
    expect((await send(putUrl, 'PUT', SSE, randomBytes(10))).status).toBe(403);
    expect((await send(getUrl, 'GET')).status).toBe(403);
    expect(await s.store.stat(key)).toBe(10);
  });

  it('moves an object to its trash key, where no address issued before reaches it, and back with the same bytes and type', async () => {
    const key = await s.newKey();
    const bytes = Buffer.from('a recognisable secret sentence. '.repeat(3000));
    expect((await send(await s.store.presignPut(key, s.presign), 'PUT', { ...SSE, 'Content-Type': 'image/png' }, bytes)).status).toBe(200);
    const before = await s.store.presignGet(key, s.presign);
    await s.store.moveToTrash(key);
    expect((await send(before, 'GET')).status).toBe(404);
    expect([await s.store.stat(key), await s.store.stat(trashKey(key))]).toEqual([null, bytes.length]);
    const listed: string[] = [];
    for await (const object of s.store.list(`${s.alice.address}/`)) listed.push(object.key);
    expect(listed).toContain(trashKey(key));
    expect(listed).not.toContain(key);
    if ('replicated' in s && s.replicated)
      expect((await s.replicated.stored(s.bucket, trashKey(key))).bytes.includes('recognisable secret')).toBe(false);
    // A repeat (a crash after the move) changes nothing.
    await s.store.moveToTrash(key);
    expect(await s.store.stat(trashKey(key))).toBe(bytes.length);

    await s.store.moveFromTrash(key);
    expect(await s.store.stat(trashKey(key))).toBeNull();
    const after = await send(await s.store.presignGet(key, s.presign), 'GET');
    expect([after.status, after.headers['content-type']]).toEqual([200, 'image/png']);
    expect(after.body.equals(bytes)).toBe(true);
    await s.store.moveFromTrash(key);
    expect(await s.store.stat(key)).toBe(bytes.length);
  });

  it('removes objects; stat then gives null, and removing a missing object is fine', async () => {
    const key = await s.newKey();
    await send(await s.store.presignPut(key, s.presign), 'PUT', SSE, randomBytes(10));
    expect(await s.store.stat(key)).toBe(10);
    await s.store.remove(key);
    expect(await s.store.stat(key)).toBeNull();
    await expect(s.store.remove(key)).resolves.toBeUndefined();
    await expect(s.store.remove(await s.newKey())).resolves.toBeUndefined();
  });
});

describe('local store behind the gateway', () => {
  let s: Awaited<ReturnType<typeof localSubject>>;

  beforeAll(async () => {
    s = await localSubject();
  });
  afterAll(() => s?.close());

  function storedFiles(dir: string): string[] {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name));
  }

  it('keeps the bytes encrypted on disk', async () => {
    const key = await s.newKey();
    const plaintext = Buffer.from('a recognisable secret sentence. '.repeat(200));
    expect((await send(await s.store.presignPut(key, s.presign), 'PUT', SSE, plaintext)).status).toBe(200);
    const files = storedFiles(path.join(s.gw.config.DATA_DIR, 'blobs'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const content = readFileSync(file);
      expect(content.includes('recognisable secret')).toBe(false);
      expect(content.includes(key)).toBe(false);
    }
    expect(path.basename(files[0] as string)).not.toContain(s.alice.username);
  });

  it('answers 413 to uploads over MAX_UPLOAD_BYTES, declared or streamed, and stores nothing', async () => {
    const declared = await s.newKey();
    expect((await send(await s.store.presignPut(declared, s.presign), 'PUT', SSE, randomBytes(MAX_UPLOAD_BYTES + 1))).status).toBe(413);
    expect(await s.store.stat(declared)).toBeNull();

    const streamed = await s.newKey();
    const chunks = Array.from({ length: 5 }, () => randomBytes(MAX_UPLOAD_BYTES / 4));
    const reply = await send(await s.store.presignPut(streamed, s.presign), 'PUT', SSE, chunks).catch(
      (error: NodeJS.ErrnoException) => error,
    );
    // The gateway closes the connection after its 413; the client may notice that first.
    if ('status' in reply) expect(reply.status).toBe(413);
    else expect(['ECONNRESET', 'EPIPE']).toContain(reply.code);
    expect(await s.store.stat(streamed)).toBeNull();
    expect(storedFiles(path.join(s.gw.config.DATA_DIR, 'blobs', 'tmp'))).toEqual([]);
  });

  it('accepts an upload of exactly MAX_UPLOAD_BYTES', async () => {
    const key = await s.newKey();
    expect((await send(await s.store.presignPut(key, s.presign), 'PUT', SSE, randomBytes(MAX_UPLOAD_BYTES))).status).toBe(200);
    expect(await s.store.stat(key)).toBe(MAX_UPLOAD_BYTES);
  });

  it('stores JSON bodies as bytes, untouched by the JSON parser', async () => {
    const key = await s.newKey();
    const json = Buffer.from('{ "kept": "exactly as sent" }\n');
    expect((await send(await s.store.presignPut(key, s.presign), 'PUT', { ...SSE, 'Content-Type': 'application/json' }, json)).status).toBe(
      200,
    );
    expect((await send(await s.store.presignGet(key, s.presign), 'GET')).body.equals(json)).toBe(true);
  });

  it('honours an address only on the instance that owns the key', async () => {
    const bob = await signUp(s.gw.app, 'bob');
    const key = await s.newKey();
    const onBob = (await s.store.presignPut(key, s.presign)).replace(s.alice.address, bob.address);
    expect((await send(onBob, 'PUT', SSE, randomBytes(10))).status).toBe(403);
    expect(await s.store.stat(key)).toBeNull();
  });

  it('honours an address only for its method', async () => {
    const key = await s.newKey();
    const putUrl = await s.store.presignPut(key, s.presign);
    expect((await send(putUrl, 'PUT', SSE, randomBytes(10))).status).toBe(200);
    expect((await send(putUrl, 'GET')).status).toBe(403);
    expect((await send(await s.store.presignGet(key, s.presign), 'PUT', SSE, randomBytes(10))).status).toBe(403);
  });

  it('answers GETs with the content type of the upload, sandboxed', async () => {
    const key = await s.newKey();
    const page = Buffer.from('<script>alert(1)</script>');
    await send(await s.store.presignPut(key, s.presign), 'PUT', { ...SSE, 'Content-Type': 'text/html; charset=utf-8' }, page);
    const got = await send(await s.store.presignGet(key, s.presign), 'GET');
    expect(got.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(got.headers['content-length']).toBe(String(page.length));
    expect(got.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(got.body.equals(page)).toBe(true);
  });

  it('answers 404 for a signed GET of an object that is not there', async () => {
    expect((await send(await s.store.presignGet(await s.newKey(), s.presign), 'GET')).status).toBe(404);
  });

  it('never serves a complete body from a file altered on disk', async () => {
    const blobs = path.join(s.gw.config.DATA_DIR, 'blobs');
    const before = new Set(storedFiles(blobs));
    const key = await s.newKey();
    await send(await s.store.presignPut(key, s.presign), 'PUT', SSE, randomBytes(1000));
    const [file] = storedFiles(blobs).filter((f) => !before.has(f));
    const content = readFileSync(file as string);
    // A byte of the ciphertext (the tag is the last 16).
    content[content.length - 20]! ^= 1;
    writeFileSync(file as string, content);
    const reply = await send(await s.store.presignGet(key, s.presign), 'GET').catch((error: NodeJS.ErrnoException) => error);
    // The status is out before the tag is checked at the end: the connection is cut, so the client sees
    // an error (premature close), never a body that merely looks short.
    expect(reply).not.toHaveProperty('status');
    expect(String((reply as Error).message)).toMatch(/aborted|socket hang up|ECONNRESET|premature/i);
  });
});

// What the gateway promises on S3, where the bytes never pass through it: the size limit is checked at
// complete, and objects no live file points to are swept. Each subject has a fresh bucket here.
describe.each(S3_SUBJECTS)('S3 behind the gateway: %s', (_name, start) => {
  let s: S3Subject;

  beforeAll(async () => {
    s = await start();
  }, START_TIMEOUT);
  afterAll(() => s?.close());

  const as = (req: request.Test) => req.set('Host', s.alice.address).set('X-Auth-Token', s.alice.token);
  const complete = (fileId: string) => as(request(s.gw.app).put(`/api/v2.6/files/file/${fileId}/complete`));

  it('refuses to complete an upload over MAX_UPLOAD_BYTES with 413 and removes its bytes; completes one of exactly the limit', async () => {
    const over = await startUpload(s.gw, s.alice);
    expect((await send(over.contentUrl, 'PUT', SSE, randomBytes(MAX_UPLOAD_BYTES + 1))).status).toBe(200);
    const refused = await complete(over.fileId);
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({ error: 'Payload Too Large', message: expect.stringContaining(`over the limit of ${MAX_UPLOAD_BYTES}`) });
    expect(await s.store.stat(objectKey(s.alice.address, over.fileId))).toBeNull();

    const fits = await startUpload(s.gw, s.alice);
    expect((await send(fits.contentUrl, 'PUT', SSE, randomBytes(MAX_UPLOAD_BYTES))).status).toBe(200);
    const completed = await complete(fits.fileId);
    expect(completed.status).toBe(200);
    expect(completed.body.status).toEqual({ status: 'Completed', size: MAX_UPLOAD_BYTES });
  });

  it('sweeps the objects no live file points to, keeping live files and keys of another shape', async () => {
    const put = async (url: string) => expect((await send(url, 'PUT', SSE, randomBytes(10))).status).toBe(200);
    const kept = await startUpload(s.gw, s.alice);
    await put(kept.contentUrl);
    expect((await complete(kept.fileId)).status).toBe(200);
    // Bytes PUT to the address of a file deleted while the address was still valid.
    const late = await startUpload(s.gw, s.alice);
    expect((await as(request(s.gw.app).delete(`/api/v2.6/files/file/${late.fileId}`))).status).toBe(200);
    await put(late.contentUrl);
    // Bytes for a file that never existed, and an object this product did not name.
    const ghost = objectKey(s.alice.address, 'never-created.bin');
    await put(await s.store.presignPut(ghost, s.presign));
    await put(await s.store.presignPut('foreign-object', s.presign));

    const files = new FileRepository(s.gw.db);
    const store = s.store as S3BlobStore;
    // Objects younger than the cutoff are left alone (their upload may still be landing).
    expect(await removeOrphans(store, (keys) => files.liveFiles(keys), new Date(Date.now() - 3600_000))).toBe(0);
    expect(await removeOrphans(store, (keys) => files.liveFiles(keys), new Date(Date.now() + 60_000))).toBe(2);
    expect(await s.store.stat(objectKey(s.alice.address, late.fileId))).toBeNull();
    expect(await s.store.stat(ghost)).toBeNull();
    expect(await s.store.stat(objectKey(s.alice.address, kept.fileId))).toBe(10);
    expect(await s.store.stat('foreign-object')).toBe(10);
  });
});

describe('S3 store moving an object larger than one copy request', () => {
  it('copies it in parts to the trash and back: the same bytes and type', async () => {
    const MiB = 1024 * 1024;
    const settings = globalS3();
    // Parts of 5 MiB (S3's smallest) stand in for the 5 GiB of one CopyObject.
    const store = new S3BlobStore({ ...settings, bucket: `pds-copy-${randomBytes(6).toString('hex')}`, copyPartBytes: 5 * MiB });
    await store.ensureBucket();
    const key = 'alice.pds.test/big.bin';
    const bytes = randomBytes(11 * MiB);
    await store.write(key, Readable.from([bytes]), { contentType: 'video/mp4' });
    await store.moveToTrash(key);
    expect([await store.stat(key), await store.stat(trashKey(key))]).toEqual([null, bytes.length]);
    await store.moveFromTrash(key);
    const back = await store.read(key);
    expect(back?.contentType).toBe('video/mp4');
    const chunks: Buffer[] = [];
    for await (const chunk of back!.stream as AsyncIterable<Buffer>) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    expect(await store.stat(trashKey(key))).toBeNull();
    await store.removePrefix('alice.pds.test/');
  });
});
