// What `pnpm bench` prints about the targets a run missed: by how much, and what its figures say about why.
import { markdownReport, type Pair, type Report, type RouteFigure } from '../scripts/bench/report';
import type { LoadResult } from '../scripts/bench/load';
import { HELLO } from '../scripts/bench/routes';
import { sanityOf } from '../scripts/bench/sanity';

const result = (rps: number, p99: number, cpuUsPerRequest: number): LoadResult => ({
  requests: rps * 10,
  seconds: 10,
  rps,
  p50: p99 / 4,
  p95: p99 / 2,
  p99,
  errors: 0,
  cpuUsPerRequest,
});

const pair = (product: LoadResult, baseline: LoadResult, compare: 'rps' | 'p95' = 'rps'): Pair => ({
  product,
  baseline,
  ratio: compare === 'rps' ? product.rps / baseline.rps : product.p95 / baseline.p95,
  cpuRatio: (baseline.cpuUsPerRequest ?? 0) / (product.cpuUsPerRequest ?? 1),
});

/** A route measured through nginx and directly, the same figures both ways unless `direct` is given. */
function route(name: string, product: LoadResult, baseline: LoadResult, target?: number, direct?: Pair): RouteFigure {
  const proxied = pair(product, baseline);
  return {
    name,
    compare: 'rps',
    proxied,
    direct: direct ?? proxied,
    target,
    met: target === undefined ? undefined : proxied.ratio >= target,
  };
}

function report(overrides: Partial<Report>): Report {
  return {
    date: '2026-11-25T00:00:00.000Z',
    quick: false,
    machine: '2 cores',
    cores: 2,
    settings: { rounds: 3, seconds: 5 },
    routes: [route('file metadata GET', result(14_000, 6, 70), result(15_000, 3, 50), 0.85)],
    ...overrides,
  };
}

const missedSection = (markdown: string) => markdown.split('## Targets missed in this run')[1];

test('a run that meets every target prints no missed section', () => {
  expect(missedSection(markdownReport(report({})))).toBeUndefined();
});

test('the route table puts the through-nginx figures first, the direct ratio beside them, with CPU per request', () => {
  const direct = pair(result(9_000, 4, 60), result(10_000, 2, 50));
  const file = route('file metadata GET', { ...result(7_000, 6, 70), proxyCpuUsPerRequest: 30 }, result(8_000, 3, 56), 0.85, direct);
  const markdown = markdownReport(report({ routes: [file] }));
  expect(markdown).toContain(
    '| file metadata GET | 7,000 req/s, p99 6.0 ms; CPU 70 µs/req (nginx 30) | 8,000 req/s, p99 3.0 ms; CPU 56 µs/req | 0.88 (0.80) | 9,000 / 10,000 req/s | 0.90 (0.83) | ≥ 0.85 | yes |',
  );
});

test('a missed route says by how much through nginx, its direct ratio, and whether its CPU per request meets the target', () => {
  const search: RouteFigure = {
    name: 'search take=100 (p95)',
    compare: 'p95',
    proxied: pair(result(900, 8, 900), result(1500, 4, 600), 'p95'),
    direct: pair(result(900, 6, 900), result(1500, 4, 600), 'p95'),
    target: 1.2,
    met: false,
  };
  const slow = report({ routes: [route('validate', result(300, 9, 900), result(1000, 3, 300), 1), search] });
  const missed = missedSection(markdownReport(slow)) ?? '';
  expect(missed).toContain(
    'validate: 0.30 of the bare throughput through nginx against 1, short by 70 % (direct: 0.30); by CPU per request it reaches 0.33: the product spends',
  );
  expect(missed).toContain(
    'search take=100 (p95): 2.00× the bare p95 through nginx against at most 1.2×, over by 67 % (direct: 1.50×); by CPU per request it reaches 0.67: the product spends',
  );
});

describe('the sanity line', () => {
  const hello = (proxiedRps: number, directRps: number) =>
    route(HELLO, result(5_000, 9, 50), result(proxiedRps, 3, 15), undefined, pair(result(6_000, 9, 50), result(directRps, 3, 15)));

  it('passes when the bare hello is faster than every product route, both ways', () => {
    const sanity = sanityOf([report({}).routes[0] as RouteFigure, hello(20_000, 30_000)]);
    expect(sanity).toEqual({ helloRps: { proxied: 20_000, direct: 30_000 }, fasterThanHello: [] });
    expect(markdownReport(report({ sanity }))).toContain(
      'Sanity: the bare hello answered 20,000 req/s through nginx and 30,000 direct, faster than every product route.',
    );
  });

  it('fails, naming the routes, when a product route answers more requests a second than the bare hello the same way', () => {
    // 2026-11-25: the bare hello's requests had no Host, so each was a 400 on a new connection.
    const sanity = sanityOf([report({}).routes[0] as RouteFigure, hello(20_000, 12_933)]);
    expect(sanity?.fasterThanHello).toEqual(['file metadata GET direct (14000 req/s)']);
    expect(markdownReport(report({ sanity }))).toContain('**Sanity check failed**: the bare hello answered 20,000 req/s through nginx');
  });

  it('has nothing to say when the hello was not measured', () => {
    expect(sanityOf(report({}).routes)).toBeUndefined();
  });
});

describe('the mixed traffic', () => {
  const groups = (otherP99: number) => ({
    other: { requests: 4_500, errors: 0, p50: 20, p95: 60, p99: otherP99 },
    login: { requests: 500, errors: 0, p50: 200, p95: 400, p99: 450 },
  });
  const mixed = (otherP99: number) =>
    report({
      mixed: {
        connections: 48,
        // 10 % logins: 3,400 µs per request with them, 600 without, so one login costs 28,600 µs.
        result: { ...result(500, 400, 3400), groups: groups(otherP99) },
        withoutLogins: result(1600, 90, 600),
        loginShare: 0.1,
        p99TargetMs: 100,
      },
    });

  it('is judged by the p99 of the requests other than logins, each group shown apart', () => {
    const markdown = markdownReport(mixed(95));
    expect(markdown).toContain(
      '| mixed traffic through nginx, 48 connections: the requests other than logins | 4,500 answered, p50 20 ms, p95 60 ms, p99 95 ms, 0 errors | — | — | p99 ≤ 100 ms, no errors | yes |',
    );
    expect(markdown).toContain('| mixed: its logins (10 % of the requests) | 500 answered, p50 200 ms, p95 400 ms, p99 450 ms, 0 errors |');
    expect(missedSection(markdown)).toBeUndefined();
  });

  it('when missed, names the logins’ share of the CPU and the latency floor it implies', () => {
    const missed = missedSection(markdownReport(mixed(160))) ?? '';
    expect(missed).toContain('mixed traffic: the requests other than logins had a p99 of 160 ms against 100 ms, 1.60× over.');
    expect(missed).toContain('84 % of the CPU (29 ms each');
    expect(missed).toContain('without the logins the same mix meets it (p99 90 ms)');
    // 2 cores at 3.4 ms per request: 588 req/s at most, so 48 connections wait ≥ 82 ms on average.
    expect(missed).toContain('2 cores serve at most 588 req/s, so 48 connections wait at least 82 ms on average');
  });
});

test('a missed stream says how much longer each transfer took, and for an upload what it does more', () => {
  const streams = report({
    streams: [
      {
        mib: 1,
        // 1 MiB: 5.99 ms at 175 MB/s against 4.77 ms at 220 MB/s.
        uploadMBps: { product: 175, baseline: 220 },
        downloadMBps: { product: 300, baseline: 290 },
        diskMBps: { write: 700, read: 1500 },
        uploadRatio: 175 / 220,
        downloadRatio: 300 / 290,
        target: 0.8,
        met: false,
      },
    ],
  });
  const missed = missedSection(markdownReport(streams)) ?? '';
  expect(missed).toContain(
    'local store upload of 1 MiB: 0.80 of the bare server against 0.8, short by 0.6 %; each transfer took 1.2 ms longer (6.0 against 4.8 ms)',
  );
  expect(missed).toContain('the folder’s fsync after the rename');
  expect(missed).not.toContain('download');
});
