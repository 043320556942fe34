// The S3 presigner against another implementation of Signature V4: minio-js signs the same GET
// addresses (it cannot sign extra headers; the PUTs' SSE header is checked against real S3 services
// in contract.test.ts). One presigner signs across midnight, where its day's signing key changes.
import { Client } from 'minio';
import fc from 'fast-check';
import { SigV4Presigner } from '../src/sigv4';

const service = {
  endpoint: new URL('http://127.0.0.1:9000'),
  bucket: 'pds-files',
  region: 'eu-west-1',
  accessKey: 'AKIA/EXAMPLE',
  secretKey: 'wJalr/XUtnFEMI',
};
const minio = new Client({
  endPoint: '127.0.0.1',
  port: 9000,
  useSSL: false,
  accessKey: service.accessKey,
  secretKey: service.secretKey,
  region: service.region,
  pathStyle: true,
});

/** An address's parameters, in order of name: the same address whatever order they were written in. */
const parametersOf = (address: string) => {
  const url = new URL(address);
  return { path: url.origin + url.pathname, query: [...url.searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) };
};

const MIDNIGHT = Date.UTC(2026, 10, 30);

it('signs GET addresses as minio-js does, with and without response headers, one day after another', async () => {
  const presigner = new SigV4Presigner(service);
  await fc.assert(
    fc.asyncProperty(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 200 }),
      fc.option(fc.record({ type: fc.string({ maxLength: 40 }), disposition: fc.string({ maxLength: 80 }) })),
      // A parameter whose name sorts among the signature's own, before them or after them (not one that
      // extends another's name, as X-Amz-Date-Of: minio-js orders those by name=value, AWS by name).
      fc.option(fc.tuple(fc.constantFrom('X-Amz-Checksum', 'X-Amz-Content', 'Accept', 'uploadId'), fc.string({ maxLength: 20 }))),
      // Instants on both sides of midnight, in any order: the presigner's day changes back and forth.
      fc.integer({ min: -36 * 3600, max: 36 * 3600 }),
      fc.integer({ min: 1, max: 604_800 }),
      async (key, response, other, second, expires) => {
        const now = new Date(MIDNIGHT + second * 1000);
        const query: Record<string, string> = {};
        if (response)
          Object.assign(query, { 'response-content-type': response.type, 'response-content-disposition': response.disposition });
        if (other) query[other[0]] = other[1];
        const ours = presigner.presign({ method: 'GET', key, query: response || other ? query : undefined, expiresSeconds: expires, now });
        const theirs = await minio.presignedGetObject(service.bucket, key, expires, query, now);
        expect(parametersOf(ours)).toEqual(parametersOf(theirs));
      },
    ),
    { numRuns: 300 },
  );
});

describe('the key an upload address grants', () => {
  const presigner = new SigV4Presigner(service);
  const UPLOAD = { method: 'PUT', headers: { 'x-amz-server-side-encryption': 'AES256' } };
  const now = new Date(MIDNIGHT - 60_000);
  const address = presigner.presign({ ...UPLOAD, key: 'alice.pds.example/report one.pdf', expiresSeconds: 900, now });

  it('is its key until it expires, also once the day has changed', () => {
    expect(presigner.keyOf(address, UPLOAD, now)).toBe('alice.pds.example/report one.pdf');
    presigner.presign({ ...UPLOAD, key: 'another', expiresSeconds: 900, now: new Date(MIDNIGHT + 60_000) });
    expect(presigner.keyOf(address, UPLOAD, new Date(MIDNIGHT + 839_000))).toBe('alice.pds.example/report one.pdf');
    expect(presigner.keyOf(address, UPLOAD, new Date(MIDNIGHT + 841_000))).toBeNull();
  });

  it('is none for an address altered, of another method or headers, service or bucket', () => {
    expect(presigner.keyOf(address.replace('report%20one', 'report%20two'), UPLOAD, now)).toBeNull();
    expect(presigner.keyOf(address.replace('X-Amz-Expires=900', 'X-Amz-Expires=9000'), UPLOAD, now)).toBeNull();
    expect(presigner.keyOf(address, { method: 'GET', headers: UPLOAD.headers }, now)).toBeNull();
    expect(presigner.keyOf(address, { method: 'PUT' }, now)).toBeNull();
    expect(new SigV4Presigner({ ...service, bucket: 'other' }).keyOf(address, UPLOAD, now)).toBeNull();
    expect(new SigV4Presigner({ ...service, secretKey: 'another secret' }).keyOf(address, UPLOAD, now)).toBeNull();
    expect(presigner.keyOf('not an address', UPLOAD, now)).toBeNull();
  });
});
