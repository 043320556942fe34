// The envelope's headers (the security headers, X-Request-Id) reach every answer exactly once, whether the
// server's responses are EnvelopedResponses or plain ones, however the handler writes its head: an API
// answer (JSON, or no body) the API's security headers and none of the documents' others, anything else
// helmet's whole set; a header the handler gives itself wins.
import { createServer, get, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API_SECURITY_HEADERS, ENVELOPED, helmetHeaders, json, openRequest, sendReply } from '../src';
import { createLogger } from '../../runtime/src';

const logger = createLogger({ level: 'silent' });
const PAGE = helmetHeaders();
const API = API_SECURITY_HEADERS;

const handlers: Record<string, (res: ServerResponse) => void> = {
  '/reply': (res) => sendReply(res, json({ ok: true }, 201)),
  '/reply-with-own-csp': (res) => {
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    sendReply(res, json({ ok: true }));
  },
  '/head-with-object': (res) => {
    res.writeHead(200, 'Fine', { 'content-security-policy': "default-src 'none'", 'Content-Type': 'text/plain' });
    res.end('hi');
  },
  '/head-with-list': (res) => {
    res.writeHead(202, ['x-frame-options', 'DENY']);
    res.end();
  },
  '/implicit-head': (res) => {
    res.statusCode = 204;
    res.end();
  },
  '/redirect': (res) => {
    res.writeHead(303, { Location: 'http://blobs.example/a' });
    res.end();
  },
  '/page': (res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end('<p>hi</p>');
  },
  '/stream': (res) => {
    res.setHeader('Content-Type', 'text/plain');
    res.write('a');
    res.end('b');
  },
};

const listener: RequestListener = (req, res) => {
  openRequest(req, res, logger);
  handlers[req.url ?? '']!(res);
};

let enveloped: Server;
let plain: Server;

beforeAll(async () => {
  enveloped = createServer(ENVELOPED, listener);
  plain = createServer(listener);
  await Promise.all([enveloped, plain].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
});

afterAll(async () => {
  await Promise.all([enveloped, plain].map((server) => new Promise((resolve) => server.close(resolve))));
});

/** The answer's status and its headers as sent: lower-cased name → every value it was sent with. */
function fetchHead(server: Server, path: string): Promise<{ status: number; message: string; headers: Map<string, string[]> }> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, headers: { 'X-Request-Id': `id-of${path.replaceAll('/', '-')}` } }, (res: IncomingMessage) => {
      const headers = new Map<string, string[]>();
      for (let i = 0; i < res.rawHeaders.length; i += 2) {
        const name = res.rawHeaders[i]!.toLowerCase();
        headers.set(name, [...(headers.get(name) ?? []), res.rawHeaders[i + 1]!]);
      }
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, message: res.statusMessage!, headers }));
    }).on('error', reject);
  });
}

/**
 * Every envelope header of `set` once (the handler's value where it gave one, else the envelope's), and
 * no other security header.
 */
function expectEnvelope(headers: Map<string, string[]>, path: string, set: [string, string][], own: Record<string, string> = {}): void {
  for (const [name, value] of set) expect([name, headers.get(name.toLowerCase())]).toEqual([name, [own[name.toLowerCase()] ?? value]]);
  const others = PAGE.map(([name]) => name.toLowerCase()).filter((name) => !set.some(([setName]) => setName.toLowerCase() === name));
  expect(others.filter((name) => headers.has(name))).toEqual([]);
  expect(headers.get('x-request-id')).toEqual([`id-of${path.replaceAll('/', '-')}`]);
}

describe.each([
  ['an EnvelopedResponse', () => enveloped],
  ['a plain ServerResponse', () => plain],
])('on %s', (_kind, server) => {
  it('a rendered reply carries the envelope once, with its own type and length', async () => {
    const { status, headers } = await fetchHead(server(), '/reply');
    expect(status).toBe(201);
    expectEnvelope(headers, '/reply', API);
    expect(headers.get('content-type')).toEqual(['application/json; charset=utf-8']);
    expect(headers.get('content-length')).toEqual([String('{"ok":true}'.length)]);
  });

  it("a header the handler set before the reply wins over the envelope's", async () => {
    const { headers } = await fetchHead(server(), '/reply-with-own-csp');
    expectEnvelope(headers, '/reply-with-own-csp', API, { 'content-security-policy': "default-src 'none'; sandbox" });
  });

  it('a head written at once, with an object or a list, keeps its status, message and headers, and gains the rest', async () => {
    const object = await fetchHead(server(), '/head-with-object');
    expect([object.status, object.message]).toEqual([200, 'Fine']);
    expectEnvelope(object.headers, '/head-with-object', PAGE, { 'content-security-policy': "default-src 'none'" });
    expect(object.headers.get('content-type')).toEqual(['text/plain']);
    const list = await fetchHead(server(), '/head-with-list');
    expect(list.status).toBe(202);
    expectEnvelope(list.headers, '/head-with-list', API, { 'x-frame-options': 'DENY' });
  });

  it('an implicit head and a streamed body carry it too', async () => {
    const implicit = await fetchHead(server(), '/implicit-head');
    expect(implicit.status).toBe(204);
    expectEnvelope(implicit.headers, '/implicit-head', API);
    const streamed = await fetchHead(server(), '/stream');
    expectEnvelope(streamed.headers, '/stream', PAGE);
    expect(streamed.headers.get('transfer-encoding')).toEqual(['chunked']);
  });

  it("a redirect is an API answer; a page, set by its type before an implicit head, gets the documents' whole set", async () => {
    const redirect = await fetchHead(server(), '/redirect');
    expect([redirect.status, redirect.headers.get('location')]).toEqual([303, ['http://blobs.example/a']]);
    expectEnvelope(redirect.headers, '/redirect', API);
    const page = await fetchHead(server(), '/page');
    expectEnvelope(page.headers, '/page', PAGE);
  });
});
