// The route table's two dispatchers on a toy table: which requests the fast dispatcher serves itself
// and which it hands on, input parsed by the declared schemas, refusals answered once, and the
// forwarded headers read only from trusted proxies.
import http, { type IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import request from 'supertest';
import { z } from 'zod';
import {
  ApiError,
  clientOf,
  createBaseApp,
  createDispatcher,
  expressRoutes,
  finishApp,
  json,
  PASS,
  trustProxy,
  type AnyRoute,
  type Pipeline,
} from '../src';
import { createLogger, flushLogs } from '../../runtime/src';

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), lines };
}

const routes: AnyRoute[] = [
  {
    method: 'get',
    path: '/things/:id',
    access: 'open',
    tag: 't',
    summary: 'one thing',
    params: z.object({ id: z.string().regex(/^\d+$/, 'must be digits') }),
    query: z.object({ take: z.coerce.number().int().max(5).default(1) }),
    responses: {},
    handle: async ({ params, query }) => json({ id: params.id, take: query.take }),
  },
  {
    method: 'post',
    path: '/things',
    access: 'open',
    tag: 't',
    summary: 'make a thing',
    body: z.object({ name: z.string().min(1) }),
    responses: {},
    handle: async ({ body }) => json(body, 201),
  },
  {
    method: 'get',
    path: '/slow',
    access: 'open',
    tag: 't',
    summary: 'served by express only',
    fast: false,
    responses: {},
    handle: async () => json({ slow: true }),
  },
  {
    method: 'get',
    path: '/secret',
    access: 'closed',
    tag: 't',
    summary: 'refused by the pipeline',
    responses: {},
    handle: async () => json({ leaked: true }),
  },
  {
    method: 'get',
    path: '/elsewhere',
    access: 'pass',
    tag: 't',
    summary: 'not for this request',
    responses: {},
    handle: async () => json({ mine: true }),
  },
  {
    method: 'get',
    path: '/boom',
    access: 'open',
    tag: 't',
    summary: 'fails',
    responses: {},
    handle: async () => {
      throw new Error('secret internals');
    },
  },
];

const pipeline: Pipeline = {
  async prepare(_req, _res, route) {
    if (route.access === 'closed') throw ApiError.forbidden('no');
    if (route.access === 'pass') return PASS;
    return {};
  },
};

function servers() {
  const { logger, lines } = capturingLogger();
  const app = createBaseApp(logger);
  app.use(expressRoutes(routes, pipeline, logger));
  app.get('/elsewhere', (_req, res) => {
    res.json({ fromExpress: true });
  });
  finishApp(app, logger);
  const handedOn: string[] = [];
  const dispatcher = createDispatcher({
    routes,
    pipeline,
    logger,
    fallback: (req, res) => {
      handedOn.push(`${req.method} ${req.url}`);
      app(req, res);
    },
  });
  return { dispatcher, express: app, handedOn, lines };
}

describe('the fast dispatcher', () => {
  it('serves declared routes itself, with their input parsed by the declared schemas', async () => {
    const { dispatcher, handedOn } = servers();
    const res = await request(dispatcher).get('/things/42?take=3');
    expect([res.status, res.body]).toEqual([200, { id: '42', take: 3 }]);
    const made = await request(dispatcher).post('/things').send({ name: 'x' });
    expect([made.status, made.body]).toEqual([201, { name: 'x' }]);
    expect(handedOn).toEqual([]);
  });

  it('answers refusals where they are found, once, in the error model', async () => {
    const { dispatcher, handedOn } = servers();
    const bad = await request(dispatcher).get('/things/abc');
    expect([bad.status, bad.body]).toEqual([400, { error: 'Bad Request', message: 'id: must be digits' }]);
    expect((await request(dispatcher).get('/things/1?take=9')).status).toBe(400);
    expect((await request(dispatcher).post('/things').send({ name: '' })).status).toBe(400);
    const refused = await request(dispatcher).get('/secret');
    expect([refused.status, refused.body]).toEqual([403, { error: 'Forbidden', message: 'no' }]);
    expect(handedOn).toEqual([]);
  });

  it('logs a failure with its request id and counts nothing from it as a success; no internals reach the client', async () => {
    const { dispatcher, lines } = servers();
    const res = await request(dispatcher).get('/boom').set('X-Request-Id', 'boom-1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('secret internals');
    expect(lines.find((l) => l.msg === 'request failed' && l.err)).toMatchObject({ reqId: 'boom-1', level: 50 });
  });

  it('hands express what it does not take: routes declared slow, HEAD, what its pipeline passes on, and unknown paths', async () => {
    const { dispatcher, handedOn } = servers();
    expect((await request(dispatcher).get('/slow')).body).toEqual({ slow: true });
    expect((await request(dispatcher).head('/things/1')).status).toBe(200);
    expect((await request(dispatcher).get('/elsewhere')).body).toEqual({ fromExpress: true });
    expect((await request(dispatcher).get('/nothing')).status).toBe(404);
    expect(handedOn).toEqual(['GET /slow', 'HEAD /things/1', 'GET /elsewhere', 'GET /nothing']);
  });

  it('opens each request once: one request id and one access-log line, even when express serves it', async () => {
    const { dispatcher, lines } = servers();
    const res = await request(dispatcher).get('/slow').set('X-Request-Id', 'slow-1');
    await new Promise((resolve) => setImmediate(resolve));
    await flushLogs();
    expect(res.headers['x-request-id']).toBe('slow-1');
    expect(lines.filter((l) => l.msg === 'request')).toEqual([expect.objectContaining({ reqId: 'slow-1', status: 200 })]);
  });

  it('matches as express does: any letter case, a trailing slash, percent-decoded parameters', async () => {
    const { dispatcher, express } = servers();
    for (const path of ['/THINGS/7', '/things/7/', '/things/%37']) {
      const [fast, slow] = await Promise.all([request(dispatcher).get(path), request(express).get(path)]);
      expect([fast.status, fast.body]).toEqual([slow.status, slow.body]);
      expect(fast.body).toEqual({ id: '7', take: 1 });
    }
  });
});

describe('clientOf', () => {
  async function seen(trust: Parameters<typeof trustProxy>[0], headers: Record<string, string>) {
    let client: ReturnType<typeof clientOf> | undefined;
    const server = http.createServer((req: IncomingMessage, res) => {
      client = clientOf(req, trustProxy(trust));
      res.end();
    });
    await request(server).get('/client-probe').set(headers);
    return client!;
  }
  const forwarded = {
    Host: 'proxy.internal',
    'X-Forwarded-Host': 'alice.pds.example',
    'X-Forwarded-For': '192.0.2.7',
    'X-Forwarded-Proto': 'https',
  };

  it('believes a trusted proxy (loopback here)', async () => {
    expect(await seen(['loopback'], forwarded)).toEqual({ host: 'alice.pds.example', ip: '192.0.2.7', protocol: 'https' });
  });

  it('ignores forwarded headers from any other peer, and from every peer by default', async () => {
    const client = await seen(['10.0.0.1'], forwarded);
    expect(client.host).toBe('proxy.internal');
    // A dual-stack socket's IPv4 peer (::ffff:127.0.0.1) is named as the IPv4 address it is.
    expect(client.ip).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(client.protocol).toBe('http');
    expect(await seen(0, forwarded)).toEqual(client);
    expect(await seen([], forwarded)).toEqual(client);
  });

  it('with a hop count, takes the address the nearest proxies appended, whatever the client wrote before it', async () => {
    const chain = (xff: string) => ({ ...forwarded, 'X-Forwarded-For': xff });
    // One proxy (nginx's $proxy_add_x_forwarded_for): the client wrote "203.0.113.9", the proxy appended 192.0.2.7.
    expect((await seen(1, chain('203.0.113.9, 192.0.2.7'))).ip).toBe('192.0.2.7');
    expect((await seen(1, chain('198.51.100.1, 203.0.113.9, 192.0.2.7'))).ip).toBe('192.0.2.7');
    // Two proxies (a load balancer, then nginx): the balancer's entry is the client.
    expect((await seen(2, chain('203.0.113.9, 192.0.2.7, 10.0.0.3'))).ip).toBe('192.0.2.7');
    // Fewer entries than hops: the farthest one given, as proxy-addr answers.
    expect((await seen(3, chain('192.0.2.7'))).ip).toBe('192.0.2.7');
    // No header: the peer itself.
    expect((await seen(1, { Host: 'proxy.internal' })).ip).toMatch(/^(127\.0\.0\.1|::1)$/);
  });

  it('with addresses, walks back over every trusted proxy to the first address that is not one', async () => {
    const chain = (xff: string) => ({ ...forwarded, 'X-Forwarded-For': xff });
    expect((await seen(['loopback', '10.0.0.0/8'], chain('203.0.113.9, 192.0.2.7, 10.1.2.3, 10.9.9.9'))).ip).toBe('192.0.2.7');
    expect((await seen(['loopback', 'fd00::/8'], chain('2001:db8::7, fd12::1'))).ip).toBe('2001:db8::7');
    // Every hop a proxy: the farthest address given.
    expect((await seen(['loopback', '10.0.0.0/8'], chain('10.1.1.1, 10.2.2.2'))).ip).toBe('10.1.1.1');
  });

  it('ends the chain at the proxy that wrote something other than an address', async () => {
    const chain = (xff: string) => ({ ...forwarded, 'X-Forwarded-For': xff });
    expect((await seen(['loopback', '10.0.0.0/8'], chain('192.0.2.7, not-an-address, 10.1.2.3'))).ip).toBe('10.1.2.3');
    expect((await seen(1, chain('192.0.2.7, unknown'))).ip).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect((await seen(1, chain('192.0.2.7, ::ffff:198.51.100.4'))).ip).toBe('198.51.100.4');
  });
});

describe('trustProxy', () => {
  it('trusts the first n hops by position, whatever their addresses', () => {
    const trust = trustProxy(2);
    expect([0, 1, 2, 3].map((hop) => trust('203.0.113.9', hop))).toEqual([true, true, false, false]);
    expect(trustProxy(0)('127.0.0.1', 0)).toBe(false);
  });

  it('trusts addresses, CIDRs and names, IPv4 and IPv6 mixed, at any hop', () => {
    const trust = trustProxy(['10.0.0.0/8', '192.0.2.1', 'fd00::/8', '2001:db8::1', 'loopback']);
    const trusted = ['10.1.2.3', '192.0.2.1', 'fd12:3456::1', '2001:db8::1', '127.0.0.1', '::1', '::ffff:10.0.0.1'];
    const not = ['11.0.0.1', '192.0.2.2', 'fe80::1', '2001:db8::2', '203.0.113.9', 'garbage'];
    expect(trusted.map((a) => trust(a, 5))).toEqual(trusted.map(() => true));
    expect(not.map((a) => trust(a, 0))).toEqual(not.map(() => false));
  });
});
