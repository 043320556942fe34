// The hostile inputs that used to cost a 500 (issue 12), each answered in the error model instead.
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import request from 'supertest';
import { answerClientErrors } from '@pds/runtime';
import { appRecord, installApp } from './apps-fixtures';
import { useGateway } from '../../../test/support/use-gateway';

const { gw, dex, owners } = useGateway({ dex: true, owners: ['hostile'] });
const owner = owners.hostile;
let appToken: string;
let server: http.Server;

beforeAll(async () => {
  appToken = (await installApp(gw, dex, owner, appRecord('notes'))).token;
  // A real listener: raw bytes and Node's own parser, which supertest's serialisation would hide.
  server = http.createServer(gw.app).listen(0, '127.0.0.1');
  answerClientErrors(server);
  await new Promise((resolve) => server.once('listening', resolve));
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** Sends `body` byte for byte as the owner's JSON search request. */
function rawSearch(body: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const port = (server.address() as net.AddressInfo).port;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/api/v2.6/files/search',
        headers: { Host: owner.address, 'X-Auth-Token': owner.token, 'Content-Type': 'application/json', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const asOwner = (method: 'get' | 'post' | 'put' | 'delete', path: string) =>
  request(gw.app)[method](path).set('Host', owner.address).set('X-Auth-Token', owner.token);

function expectRefusal(res: { status: number; body: unknown }, status: number, field?: RegExp) {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: expect.any(String), message: expect.any(String) });
  if (field) expect((res.body as { message: string }).message).toMatch(field);
}

async function recordCount(): Promise<number> {
  return gw.db.dataRecord.count();
}

describe('paths', () => {
  it.each(['/api/v2.6/applications/%u002e/access-token', '/api/v2.6/data/%zz/x', '/api/v2.6/files/file/%E0%A4%A'])(
    'answers 400 for broken percent-encoding in %s',
    async (path) => expectRefusal(await asOwner('get', path), 400, /path/),
  );

  it('answers 400 naming the path for a NUL in a path parameter', async () => {
    expectRefusal(await asOwner('get', '/api/v2.6/files/file/%00'), 400, /path: may not contain NUL/);
  });
});

describe('query strings and credentials', () => {
  it('answers 400 naming the field for a NUL in login query parameters', async () => {
    const res = await request(gw.app).get('/?username=%00&pass=%00').set('Host', owner.address);
    expectRefusal(res, 400, /query\.username: may not contain NUL/);
  });

  it('answers 400 naming the header for a URL-encoded NUL in login headers', async () => {
    const res = await request(gw.app).get('/users/access_token').set('Host', owner.address).set('username', '%00').set('password', 'x');
    expectRefusal(res, 400, /username: may not contain NUL/);
  });
});

describe('JSON bodies', () => {
  it('answers 400 naming the field for a NUL in a search template', async () => {
    const res = await asOwner('post', '/api/v2.6/files/search').send({ name: '\u0000' });
    expectRefusal(res, 400, /body\.name: may not contain NUL/);
  });

  it('answers 400 naming the field for a lone surrogate in a data record, storing nothing', async () => {
    const before = await recordCount();
    const res = await request(gw.app)
      .post('/api/v2.6/data/notes/items')
      .set('Host', owner.address)
      .set('X-Auth-Token', appToken)
      .set('Content-Type', 'application/json')
      .send('{"title":"\\ud800"}');
    expectRefusal(res, 400, /body\.title: may not contain unpaired UTF-16 surrogates/);
    expect(await recordCount()).toBe(before);
  });

  it('still stores a correctly paired surrogate (an emoji)', async () => {
    const res = await request(gw.app)
      .post('/api/v2.6/data/notes/items')
      .set('Host', owner.address)
      .set('X-Auth-Token', appToken)
      .send({ title: '😀' });
    expect(res.status).toBe(201);
  });

  it('refuses a record nested 90,000 levels deep while parsing, storing nothing', async () => {
    const before = await recordCount();
    const deep = '{"a":'.repeat(90_000) + '1' + '}'.repeat(90_000);
    const res = await request(gw.app)
      .post('/api/v2.6/data/notes/items')
      .set('Host', owner.address)
      .set('X-Auth-Token', appToken)
      .set('Content-Type', 'application/json')
      .send(deep);
    expectRefusal(res, 400, /nests deeper than 64 levels/);
    expect(await recordCount()).toBe(before);
  });

  it('does not count brackets inside strings as nesting', async () => {
    const res = await request(gw.app)
      .post('/api/v2.6/data/notes/items')
      .set('Host', owner.address)
      .set('X-Auth-Token', appToken)
      .send({ title: '[[[[{{{{'.repeat(100) + '\\"' });
    expect(res.status).toBe(201);
  });

  it('answers 400 for invalid UTF-8 and 400 for invalid JSON', async () => {
    const bad = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    expectRefusal(await rawSearch(bad), 400, /UTF-8/);
    expectRefusal(
      await asOwner('post', '/api/v2.6/files/search').set('Content-Type', 'application/json').send('{"a":'),
      400,
      /not valid JSON/,
    );
  });
});

describe('Content-Encoding', () => {
  it('accepts a gzip, deflate or br body', async () => {
    const body = Buffer.from(JSON.stringify({ name: 'nothing-here' }));
    for (const [coding, bytes] of [
      ['gzip', zlib.gzipSync(body)],
      ['deflate', zlib.deflateSync(body)],
      ['br', zlib.brotliCompressSync(body)],
    ] as const) {
      const res = await rawSearch(bytes, { 'Content-Encoding': coding });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    }
  });

  it.each(['gzip', 'br', 'deflate'])('answers 400 for a corrupt %s body', async (coding) => {
    expectRefusal(await rawSearch(Buffer.from('definitely not compressed'), { 'Content-Encoding': coding }), 400, /corrupt or truncated/);
  });

  it('answers 400 for a truncated gzip body', async () => {
    const gz = zlib.gzipSync(Buffer.from(JSON.stringify({ name: 'x'.repeat(1000) })));
    expectRefusal(await rawSearch(gz.subarray(0, gz.length - 10), { 'Content-Encoding': 'gzip' }), 400, /corrupt or truncated/);
  });

  it('answers 415 for an unknown coding', async () => {
    expectRefusal(await rawSearch(Buffer.from('{}'), { 'Content-Encoding': 'compress' }), 415);
  });

  it('answers 413 for a zip bomb, stopping at the limit', async () => {
    // 8 MiB of spaces in 8 KiB: eight times the limit once inflated, yet small enough to be sent whole
    // before the 413 comes back (a bigger body still being written when the server closes after its
    // answer makes the client see ECONNRESET instead of the answer on a loaded machine).
    const bomb = zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(16 * 1024);
    expectRefusal(await rawSearch(bomb, { 'Content-Encoding': 'gzip' }), 413, /after decompression/);
  });
});

describe("Node's HTTP parser refusals", () => {
  const oversized = (method: string) => {
    const port = (server.address() as net.AddressInfo).port;
    return new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write(`${method} / HTTP/1.1\r\nHost: ${owner.address}\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
      });
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
  };

  it('answers oversized headers with 431 in the error model', async () => {
    const raw = await oversized('GET');
    expect(raw).toMatch(/^HTTP\/1\.1 431 /);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ error: 'Request Header Fields Too Large', message: expect.any(String) });
  });

  it('answers a HEAD with oversized headers with the 431 alone: a body would be read as the next response', async () => {
    const raw = await oversized('HEAD');
    expect(raw).toMatch(/^HTTP\/1\.1 431 /);
    expect(raw.endsWith('\r\n\r\n')).toBe(true);
  });
});
