// One contract, two adapters: the local store behind a real listening gateway, and S3 against the real
// server test/global-setup.ts provides (Swift with s3api unless TEST_S3_ENDPOINT names another).
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http, { type Server } from 'node:http';
import type { LookupFunction } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import { loadConfig } from '@pds/config';
import { CLUSTER, requireEnv, signUp, startTestGateway, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { BLOB_ROUTE, createBlobStore, objectKey, SSE_HEADER, SSE_VALUE, type BlobStore, type PresignOptions } from '../src';
import { tamperAt } from '../../../test/support/tamper';

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
    // An array is sent chunked (no Content-Length), as a client streaming a body of unknown size would.
    for (const chunk of Array.isArray(body) ? body : body ? [body] : []) req.write(chunk);
    req.end();
  });
}

interface Subject {
  store: BlobStore;
  address: string;
  presign: PresignOptions;
  /** Status the store answers a PUT without the SSE header. */
  missingSseStatus: number;
  /** Alters the signature of an address, keeping its shape. */
  tamper(url: string): string;
  /**
   * A key for a new object. Behind the gateway it names a real New file: the local store takes no bytes
   * for a key whose file does not exist (they would be orphans).
   */
  newKey(): Promise<string>;
  /** The same address and signature, naming another object key. */
  retarget(url: string, from: string, to: string): string;
  close(): Promise<void>;
}

async function localSubject(): Promise<Subject & { gw: TestGateway; alice: SignedUp; server: Server }> {
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
    address: alice.address,
    presign: { ttlSeconds: 300, baseUrl: `http://${alice.address}:${port}` },
    missingSseStatus: 400,
    newKey: async () => {
      const res = await request(gw.app)
        .post('/api/v2.6/files/upload')
        .set('Host', alice.address)
        .set('X-Auth-Token', alice.token)
        .send({ name: `f${randomBytes(6).toString('hex')}.bin`, source: 'contract' });
      if (res.status !== 200) throw new Error(`upload of a test file failed: ${res.status}`);
      return objectKey(alice.address, res.body.fileId as string);
    },
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

async function s3Subject(): Promise<Subject> {
  const config = loadConfig({
    STORAGE: 's3',
    S3_ENDPOINT: requireEnv('TEST_S3_ENDPOINT'),
    S3_ACCESS_KEY: requireEnv('TEST_S3_ACCESS_KEY'),
    S3_SECRET_KEY: requireEnv('TEST_S3_SECRET_KEY'),
    S3_REGION: requireEnv('TEST_S3_REGION'),
    S3_BUCKET: 'pds-storage-contract',
  });
  return {
    // The S3 store uses no master key; every process that opens a store has one.
    store: await createBlobStore({ ...config, MASTER_KEY: randomBytes(32) }),
    address: `alice.${CLUSTER}`,
    presign: { ttlSeconds: 300, baseUrl: `http://alice.${CLUSTER}` },
    // The SSE header is signed: without it the signature does not match.
    missingSseStatus: 403,
    newKey: async () => objectKey(`alice.${CLUSTER}`, `f${randomBytes(6).toString('hex')}.bin`),
    tamper: (url) => url.replace(/(X-Amz-Signature=[0-9a-f]*)[0-9a-f]/, (_, head: string) => `${head}${url.endsWith('0') ? '1' : '0'}`),
    retarget: (url, from, to) => url.replace(encodeURI(from), encodeURI(to)),
    close: async () => undefined,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ['local', localSubject],
  ['s3', s3Subject],
] as const)('BlobStore contract: %s', (_name, start) => {
  let s: Subject;

  beforeAll(async () => {
    s = await start();
  });
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

  it('stores an empty object', async () => {
    const key = await s.newKey();
    expect((await send(await s.store.presignPut(key, s.presign), 'PUT', SSE, Buffer.alloc(0))).status).toBe(200);
    expect(await s.store.stat(key)).toBe(0);
    const got = await send(await s.store.presignGet(key, s.presign), 'GET');
    expect(got.status).toBe(200);
    expect(got.body.length).toBe(0);
  });

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
