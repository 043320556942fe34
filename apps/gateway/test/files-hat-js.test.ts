// A real client, unchanged: @dataswift/hat-js (apiVersion v2.6) against the gateway on a real port.
//
// hat-js builds every address from the token's `iss` (the instance address, no port) and its `secure`
// option: `secure: false` is its own switch for http. Instance addresses have no DNS on a test machine
// and the gateway listens on a random port, so this test plays the resolver (as CLUSTER_GATEWAYS does
// for the worker): requests to `*.pds.test` go to 127.0.0.1:<port> with the instance address kept as
// Host. Node's fetch drops a Host header, hence node:http underneath. S3 addresses are fetched as they are.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HatClient } from '@dataswift/hat-js';
import request from 'supertest';
import { CLUSTER, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { getBytes, startFilesGateway, STORES } from './files-support';

const realFetch = globalThis.fetch;

function clusterFetch(port: number): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.hostname !== CLUSTER && !url.hostname.endsWith(`.${CLUSTER}`)) return realFetch(input, init);
    const body = init?.body === undefined || init.body === null ? undefined : Buffer.from(await new Response(init.body).arrayBuffer());
    return new Promise<Response>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port, method: init?.method ?? 'GET', path: url.pathname + url.search, headers: { ...(init?.headers as Record<string, string>), host: url.host } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
            resolve(new Response(chunks.length ? Buffer.concat(chunks) : null, { status: res.statusCode, headers }));
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}

describe.each(STORES)('hat-js against the gateway on the %s store', (store) => {
  let gw: TestGateway;
  let server: http.Server;
  let alice: SignedUp;
  beforeAll(async () => {
    gw = await startFilesGateway(store);
    server = await new Promise<http.Server>((resolve) => {
      const s = gw.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    globalThis.fetch = clusterFetch((server.address() as AddressInfo).port);
    alice = await signUp(gw.app, 'alice');
  });
  afterAll(async () => {
    globalThis.fetch = realFetch;
    await new Promise((resolve) => server.close(resolve));
    await gw.close();
  });

  it('uploads, completes, publishes, searches and deletes a file', async () => {
    const hat = new HatClient({ token: alice.token, apiVersion: 'v2.6', secure: false });
    const files = hat.files();
    const bytes = Buffer.from('bytes from hat-js');

    const completed = await files.uploadFile({ name: 'hello.txt', source: 'hatjs', tags: ['t'] }, bytes, 'text/plain');
    expect(completed.status).toBe(200);
    const file = completed.parsedBody as { fileId: string; status: unknown; contentUrl?: string };
    expect(file.fileId).toBe('hatjshello.txt');
    expect(file.status).toEqual({ status: 'Completed', size: bytes.length });

    const made = await files.markFileAsPublic(file.fileId);
    expect((made.parsedBody as { contentPublic: boolean }).contentPublic).toBe(true);
    // The content link hat-js hands out works without a token.
    const link = new URL(files.generateFileContentUrl(file.fileId));
    const redirect = await request(gw.app).get(link.pathname).set('Host', link.host);
    expect(redirect.status).toBe(303);
    expect((await getBytes(gw, redirect.headers.location as string)).body.equals(bytes)).toBe(true);

    const found = await files.searchFiles({ name: '', source: 'hatjs' });
    expect((found.parsedBody as { fileId: string }[]).map((f) => f.fileId)).toEqual([file.fileId]);

    const priv = await files.markFileAsPrivate(file.fileId);
    expect((priv.parsedBody as { contentPublic: boolean }).contentPublic).toBe(false);

    const removed = await files.deleteFile(file.fileId);
    expect((removed.parsedBody as { status: unknown }).status).toEqual({ status: 'Deleted' });
  });
});
