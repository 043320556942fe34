// GET /healthz (the process answers) and GET /readyz (what it depends on answers). Mounted before
// tenancy and auth, so they answer on any Host, for load balancers and orchestrators.
import { z } from 'zod';
import { json, type RouteDef } from './routing/route';

/** One dependency's check: resolves when it answers, throws (with a message naming why) when not. */
export type ReadinessCheck = () => Promise<void>;

const CHECK_TIMEOUT_MS = 2000;

/** Each check's outcome: 'ok', or why it failed. */
export async function runChecks(checks: Record<string, ReadinessCheck>): Promise<Record<string, string>> {
  const entries = await Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await outcome(check)] as const));
  return Object.fromEntries(entries);
}

/** `postgres (database "x" does not exist); redis (…)`, or undefined when every check passed. */
export function describeFailures(results: Record<string, string>): string | undefined {
  const down = Object.entries(results).filter(([, result]) => result !== 'ok');
  return down.length === 0 ? undefined : down.map(([name, why]) => `${name} (${why})`).join('; ');
}

async function outcome(check: ReadinessCheck): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch (error) {
    // First line only, bounded: driver messages name the cause ("database \"x\" does not exist"), never credentials.
    const message = error instanceof Error ? error.message : String(error);
    return (message.split('\n')[0] ?? '').slice(0, 200) || 'failed';
  } finally {
    clearTimeout(timer);
  }
}

/** Throws `<what> cannot start: postgres (…)` unless every check passes (start-up refuses what /readyz would). */
export async function requireReady(what: string, checks: Record<string, ReadinessCheck>): Promise<void> {
  const problem = describeFailures(await runChecks(checks));
  if (problem) throw new Error(`${what} cannot start: ${problem}`);
}

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The two probes as declared routes; `access` is the application's word for "any Host, no token". */
export function healthRoutes<A extends string>(access: A, checks: Record<string, ReadinessCheck>): RouteDef<A>[] {
  return [
    {
      method: 'get',
      path: '/healthz',
      access,
      tag: 'meta',
      summary: 'The process is alive (any Host, no token)',
      responses: { 200: { description: 'Alive', body: z.object({ status: z.literal('ok') }) } },
      handle: async () => json({ status: 'ok' }, 200, NO_STORE),
    },
    {
      method: 'get',
      path: '/readyz',
      access,
      tag: 'meta',
      summary: 'PostgreSQL, Redis and the store answer and the migrations are applied (any Host, no token)',
      responses: {
        200: {
          description: 'Ready, with each check',
          body: z.object({ status: z.literal('ready'), checks: z.record(z.string(), z.literal('ok')) }),
        },
        503: {
          description: 'Not ready: the message and `checks` name what is down',
          body: z.object({ error: z.string(), message: z.string(), checks: z.record(z.string(), z.string()) }),
        },
      },
      handle: async () => {
        const results = await runChecks(checks);
        const problem = describeFailures(results);
        if (!problem) return json({ status: 'ready', checks: results }, 200, NO_STORE);
        return json({ error: 'Service Unavailable', message: `Not ready: ${problem}`, checks: results }, 503, NO_STORE);
      },
    },
  ];
}
