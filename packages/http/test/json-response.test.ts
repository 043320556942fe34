import express from 'express';
import request from 'supertest';
import { createBaseApp, createLogger, finishApp } from '../src';

/** The same routes on a plain express app and on the base app, whose res.json writes directly. */
function apps() {
  const routes = (app: express.Express) => {
    app.get('/value', (_req, res) => void res.json({ name: 'Zoë ✓', n: [1, 2] }));
    app.get('/typed', (_req, res) => void res.type('application/problem+json').json({ a: 1 }));
    app.get('/created', (_req, res) => void res.status(201).json(['x']));
    app.get('/nothing', (_req, res) => void res.json(undefined));
    app.get('/empty', (_req, res) => void res.status(204).json({ dropped: true }));
  };
  const plain = express();
  plain.set('etag', false);
  routes(plain);
  const base = createBaseApp(createLogger({ level: 'silent' }));
  routes(base);
  finishApp(base);
  return { plain, base };
}

describe('direct res.json', () => {
  const { plain, base } = apps();

  it.each(['/value', '/typed', '/created', '/nothing', '/empty'])(
    'answers %s with the status, body and headers express gives',
    async (path) => {
      const [want, got] = await Promise.all([request(plain).get(path), request(base).get(path)]);
      expect(got.status).toBe(want.status);
      expect(got.text).toBe(want.text);
      expect(got.headers['content-type']).toBe(want.headers['content-type']);
      expect(got.headers['content-length']).toBe(want.headers['content-length']);
    },
  );

  it('counts the length in bytes, not characters', async () => {
    const res = await request(base).get('/value');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify({ name: 'Zoë ✓', n: [1, 2] })));
    expect(res.body).toEqual({ name: 'Zoë ✓', n: [1, 2] });
  });

  it('answers HEAD with the headers and no body, as express does', async () => {
    const [want, got] = await Promise.all([request(plain).head('/value'), request(base).head('/value')]);
    expect(got.status).toBe(200);
    expect(got.headers['content-length']).toBe(want.headers['content-length']);
    expect(got.text).toBeUndefined();
  });
});
