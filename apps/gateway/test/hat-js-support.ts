// Runs the published client, @dataswift/hat-js (apiVersion v2.6), unchanged against a test gateway on a
// real port.
//
// hat-js builds every address from the token's `iss` (the instance address, no port) and its `secure`
// option: `secure: false` is its own switch for http. Instance addresses have no DNS on a test machine
// and the gateway listens on a random port, so this helper plays the resolver (as CLUSTER_GATEWAYS does
// for the worker): requests to `*.pds.test` go to 127.0.0.1:<port> with the instance address kept as
// Host. Node's fetch drops a Host header, hence node:http underneath. Other addresses (S3) are fetched as they are.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HatClient } from '@dataswift/hat-js';
import { CLUSTER, type TestGateway } from '../../../test/support/gateway';

const realFetch = globalThis.fetch;

function clusterFetch(port: number): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.hostname !== CLUSTER && !url.hostname.endsWith(`.${CLUSTER}`)) return realFetch(input, init);
    const body = init?.body === undefined || init.body === null ? undefined : Buffer.from(await new Response(init.body).arrayBuffer());
    return new Promise<Response>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: init?.method ?? 'GET',
          path: url.pathname + url.search,
          headers: { ...(init?.headers as Record<string, string>), host: url.host },
        },
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

/** Serves the gateway on a loopback port and routes hat-js's requests to it; `close` undoes both. */
export async function serveForHatJs(gw: TestGateway): Promise<{ close(): Promise<void> }> {
  const server = await new Promise<http.Server>((resolve) => {
    const s = http.createServer(gw.app).listen(0, '127.0.0.1', () => resolve(s));
  });
  globalThis.fetch = clusterFetch((server.address() as AddressInfo).port);
  return {
    close: async () => {
      globalThis.fetch = realFetch;
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The client as a web app would make it from a token. */
export const hatClient = (token: string): HatClient => new HatClient({ token, apiVersion: 'v2.6', secure: false });

/** What a failed hat-js call rejects with: its HatCustomError carries the HTTP status. */
export async function failure(call: Promise<unknown>): Promise<{ status?: number; message?: string }> {
  try {
    await call;
  } catch (error) {
    return error as { status?: number; message?: string };
  }
  throw new Error('the call succeeded');
}
