// The default dex key source against a real HTTP server standing in for dex's /publickey.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { publicKeyPem, type SigningKeys } from '@pds/tokens';
import { signUp, startTestGateway, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { appRecord, dexKeyPair, push, pushToken } from './apps-fixtures';

let server: Server;
let served: SigningKeys | null;
let fetches = 0;
let gw: TestGateway;
let alice: SignedUp;
let first: SigningKeys;

beforeAll(async () => {
  first = await dexKeyPair();
  served = first;
  server = createServer((req, res) => {
    fetches += 1;
    if (req.url !== '/publickey' || !served) return void res.writeHead(503).end();
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end(publicKeyPem(served.publicKey));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // No dexKeys given: the gateway wires its real source from DEX_URL.
  gw = await startTestGateway({ DEX_URL: `http://127.0.0.1:${port}` });
  alice = await signUp(gw.app, 'alice');
});
afterAll(async () => {
  await gw.close();
  await new Promise((resolve) => server.close(resolve));
});

const pushWith = (keys: SigningKeys, appId = 'notes') =>
  push(gw.app, alice.address, pushToken(gw, keys, alice.address), appId, { version: 1, record: appRecord(appId) });

describe('dex public key from DEX_URL', () => {
  it('fetches the key once and keeps it', async () => {
    expect((await pushWith(first)).status).toBe(200);
    expect((await pushWith(first, 'diary')).status).toBe(200);
    expect(fetches).toBe(1);
  });

  it('refetches for an unknown key id at most once a minute, then accepts the rotated key', async () => {
    const rotated = await dexKeyPair();
    served = rotated;
    gw.clock.advance(30);
    // Within the minute since the last fetch: no refetch, the token does not verify with the old key.
    expect((await pushWith(rotated)).status).toBe(401);
    expect(fetches).toBe(1);

    gw.clock.advance(31);
    expect((await pushWith(rotated)).status).toBe(200);
    expect(fetches).toBe(2);
    // A made-up key id right after does not trigger another fetch.
    expect((await pushWith(await dexKeyPair())).status).toBe(401);
    expect(fetches).toBe(2);
  });

  it('keeps the key it has while dex is unreachable', async () => {
    const current = served as SigningKeys;
    served = null;
    gw.clock.advance(61);
    expect((await pushWith(await dexKeyPair())).status).toBe(401);
    expect(fetches).toBe(3);
    expect((await pushWith(current)).status).toBe(200);
  });
});
