import { Writable } from 'node:stream';
import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { ApiError, createBaseApp, finishApp, requestEnvelope, trustProxy, type TrustProxy } from '../src';
import { createLogger, flushLogs } from '../../runtime/src';

/** A logger whose JSON lines land in `lines`. */
function capturingLogger(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}

function appWith(logger: ReturnType<typeof createLogger>, trust?: TrustProxy) {
  const app = createBaseApp(logger, { trust });
  app.get('/hello', (_req, res) => {
    res.json({ hello: 'world' });
  });
  app.get('/boom', () => {
    throw new Error('secret internals');
  });
  app.get('/gone', () => {
    throw ApiError.notFound('nothing here');
  });
  finishApp(app, logger);
  return app;
}

/** Lines are written when the response closes, just after supertest sees it, and go out in batches (flushLogs). */
const settle = async () => {
  await new Promise((resolve) => setImmediate(resolve));
  await flushLogs();
};

describe('access log', () => {
  it('writes one line per request with id, method, path without query, status and duration', async () => {
    const { logger, lines } = capturingLogger();
    const res = await request(appWith(logger)).get('/hello?access_token=SECRET&x=1').set('X-Request-Id', 'abc-1');
    await settle();
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('abc-1');
    const access = lines.filter((l) => l.msg === 'request');
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ reqId: 'abc-1', method: 'GET', path: '/hello', status: 200, level: 30 });
    expect(access[0]?.ip).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(typeof access[0]?.ms).toBe('number');
    expect(JSON.stringify(lines)).not.toContain('SECRET');
  });

  it('names the client: the peer, or the address a trusted proxy forwarded (never one the client wrote itself)', async () => {
    const { logger, lines } = capturingLogger();
    await request(appWith(logger)).get('/hello').set('X-Forwarded-For', '203.0.113.9');
    await request(appWith(logger, trustProxy(1)))
      .get('/hello')
      .set('X-Forwarded-For', '203.0.113.9, 192.0.2.7');
    await settle();
    expect(lines.filter((l) => l.msg === 'request').map((l) => l.ip)).toEqual([expect.stringMatching(/^(127\.0\.0\.1|::1)$/), '192.0.2.7']);
  });

  it('generates an id for a missing or malformed X-Request-Id', async () => {
    const { logger, lines } = capturingLogger();
    const res = await request(appWith(logger)).get('/hello').set('X-Request-Id', 'bad id with spaces');
    await settle();
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines.find((l) => l.msg === 'request')?.reqId).toBe(res.headers['x-request-id']);
  });

  it('logs a failure at error level with its request id, and no internals reach the client', async () => {
    const { logger, lines } = capturingLogger();
    const res = await request(appWith(logger)).get('/boom');
    await settle();
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain('secret internals');
    const id = res.headers['x-request-id'];
    expect(lines.find((l) => l.msg === 'request failed' && l.err)).toMatchObject({ reqId: id, level: 50 });
    expect(lines.find((l) => l.msg === 'request failed' && l.status === 500)).toMatchObject({ reqId: id, path: '/boom' });
  });

  it('logs client errors at info level', async () => {
    const { logger, lines } = capturingLogger();
    await request(appWith(logger)).get('/gone');
    await settle();
    expect(lines.find((l) => l.msg === 'request')).toMatchObject({ status: 404, level: 30 });
  });

  it('writes nothing below the configured level', async () => {
    const { logger, lines } = capturingLogger('warn');
    await request(appWith(logger)).get('/hello');
    await settle();
    expect(lines).toEqual([]);
  });
});

describe('security headers', () => {
  it("of a page are exactly the headers helmet sets, with the request's id", async () => {
    const page = (_req: express.Request, res: express.Response) => res.type('html').end('<p>hi</p>');
    const enveloped = express()
      .use(requestEnvelope(createLogger({ level: 'silent' })))
      .get('/page', page);
    const reference = express().use(helmet()).get('/page', page);
    const [a, b] = await Promise.all([request(enveloped).get('/page'), request(reference).get('/page')]);
    const pick = (headers: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(headers).filter(([name]) => !['date', 'connection', 'keep-alive', 'x-powered-by', 'x-request-id'].includes(name)),
      );
    expect(pick(a.headers)).toEqual(pick(b.headers));
    expect(a.headers['strict-transport-security']).toContain('max-age=');
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
