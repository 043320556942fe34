// Services only some suites need (a replicated Swift, a Ceph cluster: seconds to start and hundreds of
// MB each) are started on a suite's first request, once per run, by the jest process that ran
// global-setup.ts, and stopped by global-teardown.ts. Test files run in worker processes, so they ask
// over HTTP on loopback (TEST_LAZY_SERVICES_URL): `POST /<service>` starts it (or waits for the start
// under way) and answers its description, `POST /<service>/<action>` runs one of its actions.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Memory } from '../../scripts/lib/daemons';

export interface LazyService {
  /** What a test needs to use the service (JSON). */
  info: object;
  /** Operations a test may ask for, such as stopping a replica. */
  actions: Record<string, () => Promise<void>>;
  memory?(): Memory;
  stop(): Promise<void>;
}

export type Starters = Record<string, () => Promise<LazyService>>;

interface Started {
  service: Promise<LazyService>;
  startMs?: number;
}

const MB = 2 ** 20;

export async function serveLazyServices(starters: Starters): Promise<{ url: string; stop(): Promise<void> }> {
  const started = new Map<string, Started>();
  const start = (name: string): Promise<LazyService> => {
    const known = started.get(name);
    if (known) return known.service;
    const begin = Date.now();
    const entry: Started = { service: (starters[name] as Starters[string])() };
    entry.service.then(
      () => (entry.startMs = Date.now() - begin),
      () => undefined,
    );
    started.set(name, entry);
    return entry.service;
  };
  const server = http.createServer((req, res) => {
    const [name = '', action] = (req.url ?? '').split('/').filter(Boolean);
    const answer = (status: number, body: object) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method !== 'POST' || !Object.hasOwn(starters, name)) return answer(404, { error: 'Not Found', message: `no service ${name}` });
    start(name)
      .then(async (service) => {
        if (action === undefined) return answer(200, service.info);
        const run = service.actions[action];
        if (!run) return answer(404, { error: 'Not Found', message: `no action ${action} of ${name}` });
        await run();
        answer(200, {});
      })
      .catch((error: Error) => answer(500, { error: 'Internal Server Error', message: error.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      server.close();
      for (const [name, entry] of started) {
        const service = await entry.service.catch(() => undefined);
        if (!service) continue;
        // What each service added to the run, for the record (the suites' own time is in jest's report).
        const memory = service.memory?.();
        const rss = memory
          ? `, ${Math.round(memory.rssBytes / MB)} MB RSS at the end (per-process peaks sum to ${Math.round(memory.peakBytes / MB)} MB)`
          : '';
        process.stdout.write(`\nlazy service ${name}: started in ${((entry.startMs ?? 0) / 1000).toFixed(1)} s${rss}\n`);
        await service.stop();
      }
    },
  };
}

/** Asks the run's broker for a service (starting it if no suite has yet), or for one of its actions. */
export async function lazyService<T>(name: string, action?: string): Promise<T> {
  const base = process.env.TEST_LAZY_SERVICES_URL;
  if (!base) throw new Error('TEST_LAZY_SERVICES_URL is not set: run the tests through jest (test/global-setup.ts)');
  const res = await fetch(`${base}/${name}${action ? `/${action}` : ''}`, { method: 'POST' });
  const body = (await res.json()) as T & { message?: string };
  if (!res.ok) throw new Error(`${name}${action ? ` ${action}` : ''}: ${body.message}`);
  return body;
}
