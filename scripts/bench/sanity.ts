// The sanity line: no product route costs less serving CPU per request than a bare node:http hello
// reached the same way (through nginx, or directly). When one does, the measurement is off, not the
// product cheaper than node:http: on 2026-11-25 the hello's requests went out without Host, and the
// bench reported 12,933 400-answers a second on new connections as the hello's throughput, at 2.09×
// the product's CPU per request. It is judged by CPU, not req/s: on a fast machine nginx is the
// ceiling of every cheap route through it (2026-11-29, an AMD EPYC: token validate 44,053 req/s
// through nginx against the bare hello's 38,956, at 37 µs of serving CPU against the hello's 33).
import type { LoadResult } from './load';
import type { RouteFigure, Sanity } from './report';
import { HELLO } from './routes';

/** Within a tenth is a tie: the noise of two runs of near-equal cost. */
const TIE = 1.1;

/** Serving CPU per request, or the process's where the serving processes were not read. */
const cpuOf = (result: LoadResult) => result.servingCpuUsPerRequest ?? result.cpuUsPerRequest;

export function sanityOf(routes: RouteFigure[]): Sanity | undefined {
  const hello = routes.find((route) => route.name === HELLO);
  if (!hello) return undefined;
  const cheaperThanHello: string[] = [];
  for (const way of ['proxied', 'direct'] as const) {
    const bare = cpuOf(hello[way].baseline);
    if (bare === undefined) continue;
    for (const route of routes) {
      const product = cpuOf(route[way].product);
      if (product !== undefined && product * TIE < bare)
        cheaperThanHello.push(`${route.name} ${way === 'proxied' ? 'through nginx' : 'direct'} (${Math.round(product)} µs)`);
    }
  }
  return {
    helloCpuUs: { proxied: cpuOf(hello.proxied.baseline), direct: cpuOf(hello.direct.baseline) },
    cheaperThanHello,
  };
}
