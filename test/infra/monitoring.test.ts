// The dashboard and the alert rules in infra/ (issue 36): the Grafana dashboard is current with its typed
// source (pnpm dashboard), the rules pass `promtool check rules` and their unit tests (`promtool test
// rules`), and every metric either of them names is one the product really exports: the four processes
// run here with METRICS_PORT and their /metrics are scraped.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfigFor } from '@pds/config';
import { startDex, startDexWorker } from '@pds/dex';
import { startGateway, startGatewayWorker } from '@pds/gateway';
import type { Stoppable } from '@pds/runtime';
import { dashboardQueries } from '../../infra/grafana/dashboard';
import { DASHBOARD_FILE, serialiseDashboard } from '../../scripts/dashboard';
import { freePort } from '../../scripts/lib/ports';
import { CLUSTER, requireEnv } from '../support/gateway';
import { createDatabaseFrom } from '../support/templates';

jest.setTimeout(120_000);

const PROMETHEUS = path.resolve(__dirname, '../../infra/prometheus');
const PROMTOOL = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool';

/** The alert rules' expressions, read from the YAML (each `expr:` value, on one line or as a block). */
function ruleExpressions(): string[] {
  const lines = readFileSync(path.join(PROMETHEUS, 'alerts.yml'), 'utf8').split('\n');
  const expressions: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = /^(\s*)expr:\s*(.*)$/.exec(lines[i]!);
    if (!match) continue;
    if (match[2] !== '|') {
      expressions.push(match[2]!);
      continue;
    }
    const block: string[] = [];
    while (i + 1 < lines.length && (lines[i + 1]!.startsWith(`${match[1]}  `) || lines[i + 1]!.trim() === '')) block.push(lines[++i]!);
    expressions.push(block.join(' '));
  }
  return expressions;
}

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'le',
  'inf',
  'nan',
]);

/** The metric names a PromQL expression reads: identifiers outside label matchers and groupings that are no function. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (match[2] || KEYWORDS.has(match[1]!.toLowerCase())) continue;
    names.add(match[1]!);
  }
  return [...names];
}

/** The metric names a /metrics text exports, histograms with their _bucket, _sum and _count series. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match;
    names.add(name!);
    if (type === 'histogram' || type === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

describe('the Grafana dashboard', () => {
  it('is current in infra/grafana/pds.json (pnpm dashboard), and every panel has a title, a description and a query', () => {
    expect(readFileSync(DASHBOARD_FILE, 'utf8')).toBe(serialiseDashboard());
    const board = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as {
      panels: { type: string; title?: string; description?: string; targets?: unknown[] }[];
    };
    for (const panel of board.panels.filter((p) => p.type !== 'row')) {
      expect(panel).toMatchObject({ title: expect.any(String), description: expect.any(String) });
      expect(panel.targets?.length).toBeGreaterThan(0);
    }
  });
});

describe('the alert rules', () => {
  it('pass promtool check rules and their unit tests', () => {
    if (!existsSync(PROMTOOL))
      throw new Error(`No promtool at ${PROMTOOL}: apt-get install prometheus (.ci/run does), or set PROMTOOL_PATH`);
    expect(execFileSync(PROMTOOL, ['check', 'rules', 'alerts.yml'], { cwd: PROMETHEUS, encoding: 'utf8' })).toMatch(
      /SUCCESS: \d+ rules found/,
    );
    expect(execFileSync(PROMTOOL, ['test', 'rules', 'alerts.test.yml'], { cwd: PROMETHEUS, encoding: 'utf8' })).toMatch(/SUCCESS/);
  });
});

describe('the metrics they use', () => {
  const processes: Stoppable[] = [];
  const drops: (() => Promise<void>)[] = [];
  const scraped = new Set<string>();

  beforeAll(async () => {
    const admin = requireEnv('TEST_PG_ADMIN_URL');
    const gatewayDb = await createDatabaseFrom(admin, requireEnv('TEST_GATEWAY_TEMPLATE'));
    const dexDb = await createDatabaseFrom(admin, requireEnv('TEST_DEX_TEMPLATE'));
    drops.push(gatewayDb.drop, dexDb.drop);
    const [port, dexPort] = [await freePort(), await freePort()];
    const metricsPorts = await Promise.all([0, 1, 2, 3].map(() => freePort()));
    const env = {
      LOG_LEVEL: 'silent',
      CLUSTER_DOMAIN: CLUSTER,
      PORT: String(port),
      DEX_PORT: String(dexPort),
      DEX_URL: `http://127.0.0.1:${dexPort}`,
      DATABASE_URL: gatewayDb.url,
      // The primary as its own "replica": enough for the lag gauge to be exported (it reads 0).
      DATABASE_REPLICA_URL: gatewayDb.url,
      DEX_DATABASE_URL: dexDb.url,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      MASTER_KEY: randomBytes(32).toString('hex'),
      DATA_DIR: `/tmp/pds-test-data/${randomBytes(6).toString('hex')}`,
      QUEUE_PREFIX: `metrics-${randomBytes(4).toString('hex')}`,
    };
    const withMetrics = (i: number) => ({ ...env, METRICS_PORT: String(metricsPorts[i]) });
    processes.push(await startGateway(loadConfigFor('gateway', withMetrics(0))));
    processes.push(await startDex(loadConfigFor('dex', withMetrics(1))));
    processes.push(await startGatewayWorker(loadConfigFor('gateway-worker', withMetrics(2))));
    processes.push(await startDexWorker(loadConfigFor('dex-worker', withMetrics(3))));
    // One request, so the request histogram has series.
    await fetch(`http://127.0.0.1:${port}/healthz`);
    for (const metricsPort of metricsPorts) {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      for (const name of exportedNames(text)) scraped.add(name);
    }
  });
  afterAll(async () => {
    for (const process of processes.reverse()) await process.close();
    for (const drop of drops) await drop();
  });

  it('reads the metric names of PromQL expressions', () => {
    expect(metricNames('sum by (le, route) (rate(http_request_duration_seconds_bucket{job=~"$job", status=~"5.."}[5m])) > 0.05')).toEqual([
      'http_request_duration_seconds_bucket',
    ]);
    expect(
      metricNames('max by (job) (a_free{state="free"}) / max without (x) (a_size) < 0.1 and on (job) b_total offset 5m').sort(),
    ).toEqual(['a_free', 'a_size', 'b_total']);
  });

  it('exports every metric the dashboard graphs and the alert rules watch', () => {
    const used = new Set([...dashboardQueries(), ...ruleExpressions()].flatMap(metricNames));
    expect(used.size).toBeGreaterThan(15);
    expect([...used].filter((name) => !scraped.has(name))).toEqual([]);
  });
});
