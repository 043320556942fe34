// What `pnpm bench` prints about the targets a run missed: by how much, and what its figures say about why.
import { markdownReport, type Report } from '../scripts/bench/report';
import type { LoadResult } from '../scripts/bench/load';

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

function report(overrides: Partial<Report>): Report {
  return {
    date: '2026-11-25T00:00:00.000Z',
    quick: false,
    loadGenerator: 'wrk',
    machine: '2 cores',
    cores: 2,
    settings: { rounds: 3, seconds: 5 },
    routes: [
      {
        name: 'file metadata GET',
        compare: 'rps',
        product: result(14_000, 6, 70),
        baseline: result(18_000, 3, 50),
        ratio: 14_000 / 18_000,
        cpuRatio: 50 / 70,
        target: 0.4,
        met: true,
      },
    ],
    ...overrides,
  };
}

const missedSection = (markdown: string) => markdown.split('## Targets missed in this run')[1];

test('a run that meets every target prints no missed section', () => {
  expect(missedSection(markdownReport(report({})))).toBeUndefined();
});

test('a missed route says by how much, and whether its CPU per request meets the target', () => {
  const slow = report({
    routes: [
      {
        name: 'validate',
        compare: 'rps',
        product: result(300, 9, 900),
        baseline: result(1000, 3, 300),
        ratio: 0.3,
        cpuRatio: 1 / 3,
        target: 0.4,
        met: false,
      },
      {
        name: 'search take=100 (p95)',
        compare: 'p95',
        product: result(900, 8, 900),
        baseline: result(1500, 4, 600),
        ratio: 2.1,
        cpuRatio: 0.67,
        target: 2,
        met: false,
      },
    ],
  });
  const missed = missedSection(markdownReport(slow)) ?? '';
  expect(missed).toContain(
    'validate: 0.30 of the bare throughput against 0.4, short by 25 %; by CPU per request it reaches 0.33: the product spends',
  );
  expect(missed).toContain(
    'search take=100 (p95): 2.10× the bare p95 against at most 2×, over by 5.0 %; by CPU per request it reaches 0.67, which meets the target',
  );
});

test('a missed mixed p99 names the logins’ share of the CPU and the latency floor it implies', () => {
  const mixed = report({
    mixed: {
      connections: 48,
      // 10 % logins: 3,400 µs per request with them, 600 without, so one login costs 28,600 µs.
      result: result(500, 400, 3400),
      withoutLogins: result(1600, 120, 600),
      loginShare: 0.1,
      p99TargetMs: 162.5,
    },
  });
  const missed = missedSection(markdownReport(mixed)) ?? '';
  expect(missed).toContain('mixed traffic: p99 400 ms against 163 ms, 2.46× over.');
  expect(missed).toContain('84 % of its CPU (29 ms each');
  expect(missed).toContain('without them the same mix meets it (p99 120 ms)');
  // 2 cores at 3.4 ms per request: 588 req/s at most, so 48 connections wait ≥ 82 ms on average.
  expect(missed).toContain('2 cores serve at most 588 req/s, so 48 connections wait at least 82 ms on average');
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

test('a run driven by autocannon says so and how to get wrk', () => {
  expect(markdownReport(report({ loadGenerator: 'autocannon' }))).toContain('`apt-get install wrk`');
  expect(markdownReport(report({}))).not.toContain('apt-get install wrk');
});
