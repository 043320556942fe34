// The sanity line: a bare node:http hello cannot answer fewer requests a second than any product route
// reached the same way (through nginx, or directly). When it does, the measurement is off, not the
// product faster than node:http: on 2026-11-25 the hello's requests went out without Host, and the
// bench reported 12,933 400-answers a second on new connections as the hello's throughput.
import type { RouteFigure, Sanity } from './report';
import { HELLO } from './routes';

export function sanityOf(routes: RouteFigure[]): Sanity | undefined {
  const hello = routes.find((route) => route.name === HELLO);
  if (!hello) return undefined;
  const fasterThanHello: string[] = [];
  for (const way of ['proxied', 'direct'] as const) {
    const bare = hello[way].baseline.rps;
    for (const route of routes) {
      const product = route[way].product.rps;
      if (product > bare)
        fasterThanHello.push(`${route.name} ${way === 'proxied' ? 'through nginx' : 'direct'} (${Math.round(product)} req/s)`);
    }
  }
  return { helloRps: { proxied: hello.proxied.baseline.rps, direct: hello.direct.baseline.rps }, fasterThanHello };
}
