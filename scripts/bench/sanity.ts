// The sanity line: a bare node:http hello cannot answer fewer requests a second than any product route
// reached the same way (through nginx, or directly). When it does, the measurement is off, not the
// product faster than node:http: on 2026-11-25 the hello's requests went out without Host, and the
// bench reported 12,933 400-answers a second on new connections as the hello's throughput.
// Within a tenth it is a tie, not a fault: on a fast machine nginx (one worker per core, beside wrk)
// is the ceiling of both hellos through it, and on 2026-11-29 the product's /publickey read 42,217
// req/s there against the bare hello's 40,741 (direct: 53,487 against 79,736).
import type { RouteFigure, Sanity } from './report';
import { HELLO } from './routes';

/** How far past the bare hello a product route may read before the run is judged off: the noise of a shared ceiling. */
const TIE = 1.1;

export function sanityOf(routes: RouteFigure[]): Sanity | undefined {
  const hello = routes.find((route) => route.name === HELLO);
  if (!hello) return undefined;
  const fasterThanHello: string[] = [];
  for (const way of ['proxied', 'direct'] as const) {
    const bare = hello[way].baseline.rps;
    for (const route of routes) {
      const product = route[way].product.rps;
      if (product > bare * TIE)
        fasterThanHello.push(`${route.name} ${way === 'proxied' ? 'through nginx' : 'direct'} (${Math.round(product)} req/s)`);
    }
  }
  return { helloRps: { proxied: hello.proxied.baseline.rps, direct: hello.direct.baseline.rps }, fasterThanHello };
}
