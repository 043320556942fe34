// Toy routes live off the API's documented paths: the suite checks every response to a documented one.
import express, { Router } from 'express';
import request from 'supertest';
import { scoped } from '../src/scope';

/** A router with full paths, scoped to its prefix, in front of a catch-all that names who answered. */
function app() {
  const records = Router();
  const entered: string[] = [];
  records.use((req, _res, next) => {
    entered.push(req.path);
    next();
  });
  records.get('/toy/data/:id', (req, res) => {
    res.json({ by: 'records', id: req.params.id });
  });
  const server = express();
  server.use(scoped(['/toy/data'], records));
  server.use((_req, res) => {
    res.json({ by: 'fallthrough' });
  });
  return { server, entered };
}

describe('scoped', () => {
  it('runs the router for its prefix and the paths below it, case-insensitively as express matches', async () => {
    const { server, entered } = app();
    expect((await request(server).get('/toy/data/7')).body).toEqual({ by: 'records', id: '7' });
    expect((await request(server).get('/TOY/Data/8')).body).toEqual({ by: 'records', id: '8' });
    expect((await request(server).get('/toy/data')).body).toEqual({ by: 'fallthrough' });
    expect(entered).toEqual(['/toy/data/7', '/TOY/Data/8', '/toy/data']);
  });

  it('skips the router for other paths, including ones that only share leading characters', async () => {
    const { server, entered } = app();
    for (const path of ['/toy/database/1', '/toy', '/other/toy/data/1']) {
      expect((await request(server).get(path)).body).toEqual({ by: 'fallthrough' });
    }
    expect(entered).toEqual([]);
  });

  it("shows the router's routes to whoever walks the app's stack", () => {
    const records = Router();
    records.get('/toy/data/:id', () => undefined);
    expect((scoped(['/toy/data'], records) as unknown as { stack: unknown }).stack).toBe(records.stack);
  });
});
