// Helpers of the tus suites: the protocol's requests through supertest, and what a store still holds
// of resumable uploads besides objects (S3's multipart uploads and tail objects; the local store's files
// of records), which an ended upload must not leave behind.
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'minio';
import request from 'supertest';
import { objectKey } from '@pds/storage';
import type { TestGateway } from '../../../test/support/gateway';
import { call, type As } from './files-support';

export const TUS = '/api/v2.6/files/tus';
export const VERSION = { 'Tus-Resumable': '1.0.0' };
export const PATCH_TYPE = { 'Content-Type': 'application/offset+octet-stream' };

/** Upload-Metadata of these pairs. */
export const metadata = (pairs: Record<string, string>) =>
  Object.entries(pairs)
    .map(([key, value]) => `${key} ${Buffer.from(value).toString('base64')}`)
    .join(',');

/** A New file of `as`'s: its id and signed upload address (step 1). */
export async function newFile(gw: TestGateway, as: As, name = `f-${Math.random().toString(36).slice(2)}.bin`) {
  const res = await call(gw, 'post', '/upload', as, { name, source: 'tus' }).expect(200);
  return res.body as { fileId: string; contentUrl: string };
}

/** POST to the tus endpoint: `token` adds X-Auth-Token. */
export function create(gw: TestGateway, address: string, length: number, meta: Record<string, string>, token?: string) {
  let req = request(gw.app)
    .post(TUS)
    .set('Host', address)
    .set(VERSION)
    .set('Upload-Length', String(length))
    .set('Upload-Metadata', metadata(meta));
  if (token) req = req.set('X-Auth-Token', token);
  return req;
}

/** The path of an upload's address (its Location), for requests to the gateway under test. */
export const pathOf = (location: string) => new URL(location).pathname;

export function head(gw: TestGateway, address: string, location: string) {
  return request(gw.app).head(pathOf(location)).set('Host', address).set(VERSION);
}

export function patch(
  gw: TestGateway,
  address: string,
  location: string,
  offset: number,
  bytes: Buffer,
  headers: Record<string, string> = {},
) {
  return request(gw.app)
    .patch(pathOf(location))
    .set('Host', address)
    .set(VERSION)
    .set(PATCH_TYPE)
    .set('Upload-Offset', String(offset))
    .set(headers)
    .send(bytes);
}

/** Creates an upload of `bytes` for a new file of `as`'s and sends them in one PATCH; the file id and upload address. */
export async function uploadResumably(gw: TestGateway, as: As & { token: string }, bytes: Buffer) {
  const file = await newFile(gw, as);
  const created = await create(gw, as.address, bytes.length, { fileId: file.fileId }, as.token).expect(201);
  const location = created.headers.location as string;
  await patch(gw, as.address, location, 0, bytes).expect(204);
  return { fileId: file.fileId, location };
}

/** The id (hash of the token) of the upload at this address: what the store names its leftovers by. */
export const uploadIdOf = (location: string) =>
  createHash('sha256')
    .update(location.slice(location.lastIndexOf('/') + 1))
    .digest('hex');

/**
 * What the gateway's store still holds of the upload at `location` for `fileId`, besides the object:
 * its multipart uploads and tail objects (S3), or its file of records (local).
 */
export async function resumableLeftovers(gw: TestGateway, address: string, fileId: string, location: string): Promise<string[]> {
  const { config } = gw;
  const id = uploadIdOf(location);
  if (config.STORAGE === 'local') return readdirSync(path.join(config.DATA_DIR, 'blobs', 'uploads')).filter((name) => name === id);
  const url = new URL(config.S3_ENDPOINT);
  const client = new Client({
    endPoint: url.hostname,
    port: Number(url.port),
    useSSL: url.protocol === 'https:',
    accessKey: config.S3_ACCESS_KEY,
    secretKey: config.S3_SECRET_KEY,
    region: config.S3_REGION,
    pathStyle: true,
  });
  const key = objectKey(address, fileId);
  const uploads = await client.listIncompleteUploadsQuery(config.S3_BUCKET, key, '', '', '/');
  const tails: string[] = [];
  for await (const object of gw.blobStore.list(`${address}/.uploads/${id}/`)) tails.push(object.key);
  return [...uploads.uploads.filter((u: { key: string }) => u.key === key).map(() => `multipart upload of ${key}`), ...tails];
}
