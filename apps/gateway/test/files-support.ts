// Helpers of the files-*.test.ts suites: a gateway on either real store, API calls as a given account,
// and byte transfers to signed addresses (the gateway's own for the local store, S3 otherwise).
import { randomBytes } from 'node:crypto';
import type { Env } from '@pds/config';
import request from 'supertest';
import yauzl from 'yauzl';
import { CLUSTER, requireEnv, startTestGateway, type TestGateway } from '../../../test/support/gateway';

export const FILES = '/api/v2.6/files';
export const SSE = { 'x-amz-server-side-encryption': 'AES256' };
export const STORES = ['local', 's3'] as const;
export type StoreKind = (typeof STORES)[number];

/** Who calls: an instance address and, unless anonymous, a token. */
export interface As {
  address: string;
  token?: string;
}

/** Configuration of a real store: the local disk, or the S3 server test/global-setup.ts provides. */
export function storeEnv(store: StoreKind): Partial<Record<keyof Env, string>> {
  if (store === 'local') return { STORAGE: 'local' };
  return {
    STORAGE: 's3',
    S3_ENDPOINT: requireEnv('TEST_S3_ENDPOINT'),
    S3_ACCESS_KEY: requireEnv('TEST_S3_ACCESS_KEY'),
    S3_SECRET_KEY: requireEnv('TEST_S3_SECRET_KEY'),
    S3_REGION: process.env.TEST_S3_REGION ?? 'us-east-1',
    // Test gateways reuse instance addresses (alice.pds.test), so each gets its own bucket.
    S3_BUCKET: `pds-test-${randomBytes(6).toString('hex')}`,
  };
}

export function startFilesGateway(store: StoreKind, overrides: Partial<Record<keyof Env, string>> = {}): Promise<TestGateway> {
  return startTestGateway({ ...storeEnv(store), ...overrides });
}

type Method = 'get' | 'post' | 'put' | 'delete';

/** A Files API call as `as`. */
export function call(gw: TestGateway, method: Method, path: string, as: As, body?: unknown) {
  let req = request(gw.app)[method](`${FILES}${path}`).set('Host', as.address);
  if (as.token) req = req.set('X-Auth-Token', as.token);
  return body === undefined ? req : req.send(body as object);
}

const isClusterAddress = (url: URL) => url.hostname === CLUSTER || url.hostname.endsWith(`.${CLUSTER}`);

/** PUTs bytes to a signed address; instance addresses go to the gateway under test (no DNS for them). */
export async function putBytes(gw: TestGateway, address: string, bytes: Buffer, headers: Record<string, string> = SSE): Promise<number> {
  const url = new URL(address);
  if (isClusterAddress(url)) {
    let req = request(gw.app)
      .put(url.pathname + url.search)
      .set('Host', url.host)
      .set('Content-Type', 'application/octet-stream');
    for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
    return (await req.send(bytes)).status;
  }
  const res = await fetch(address, {
    method: 'PUT',
    body: new Uint8Array(bytes),
    headers: { 'Content-Type': 'application/octet-stream', ...headers },
  });
  await res.arrayBuffer();
  return res.status;
}

/** GETs a signed address: status and body bytes. */
export async function getBytes(gw: TestGateway, address: string): Promise<{ status: number; body: Buffer }> {
  const url = new URL(address);
  if (isClusterAddress(url)) {
    const res = await request(gw.app)
      .get(url.pathname + url.search)
      .set('Host', url.host)
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        // A refusal is the documented JSON: parsed, so the OpenAPI check reads it as any other answer.
        const refused = (r.statusCode ?? 0) >= 400 && /json/.test(String(r.headers['content-type']));
        r.on('end', () => done(null, refused ? JSON.parse(Buffer.concat(chunks).toString()) : Buffer.concat(chunks)));
      });
    return { status: res.status, body: Buffer.isBuffer(res.body) ? res.body : Buffer.from(JSON.stringify(res.body)) };
  }
  const res = await fetch(address);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

/** The three steps: metadata, bytes, complete; returns the completed record. */
export async function uploadFile(gw: TestGateway, as: As, meta: Record<string, unknown>, bytes: Buffer = Buffer.from('hello')) {
  const started = await call(gw, 'post', '/upload', as, meta);
  if (started.status !== 200) throw new Error(`upload failed: ${started.status} ${JSON.stringify(started.body)}`);
  const put = await putBytes(gw, started.body.contentUrl, bytes);
  if (put !== 200) throw new Error(`PUT of the bytes failed: ${put}`);
  const completed = await call(gw, 'put', `/file/${started.body.fileId}/complete`, as);
  if (completed.status !== 200) throw new Error(`complete failed: ${completed.status} ${JSON.stringify(completed.body)}`);
  return completed.body as { fileId: string; [k: string]: unknown };
}

/** Rows of the file tables, for "a failed call changes nothing". */
export async function fileTables(gw: TestGateway) {
  return {
    files: await gw.db.file.findMany({ orderBy: [{ instanceId: 'asc' }, { fileId: 'asc' }] }),
    permissions: await gw.db.filePermission.findMany({ orderBy: [{ instanceId: 'asc' }, { fileId: 'asc' }, { userId: 'asc' }] }),
  };
}

/** The entries of a zip: name → bytes, in the zip's order. */
export function unzip(zip: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true }, (error, file) => {
      if (error || !file) return reject(error);
      const entries = new Map<string, Buffer>();
      file.on('error', reject);
      file.on('end', () => resolve(entries));
      file.on('entry', (entry: yauzl.Entry) => {
        file.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return reject(streamError);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            entries.set(entry.fileName, Buffer.concat(chunks));
            file.readEntry();
          });
        });
      });
      file.readEntry();
    });
  });
}
