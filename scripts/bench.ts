// `pnpm bench [--quick] [--only <words>]`: the product, started as `pnpm start` runs it, side by side with
// a bare node:http + pg server doing the same essential work (scripts/bench/baseline.ts), each behind its
// own nginx configured as infra/compose's and also reached directly, driven by wrk in its own process in
// interleaved rounds (medians). Prints the route figures through nginx, then direct: req/s and CPU per
// request (the gateway process; everything serving it: nginx, PostgreSQL backends, Redis; the machine
// less the load generator), product beside bare; then the stream, 10,000-instance, memory,
// mixed-traffic and GATEWAY_WORKERS figures; writes bench-results/bench-<time>.json and .md. Fails when a measured request
// failed or a product route cost less than the bare hello (scripts/bench/sanity.ts).
// `pnpm bench --only export [--mib N] [--records N] [--rounds N]`: the export writer against `tar -czf`
// over the same bytes, and the worker's RSS growth (scripts/bench/export.ts); it needs no running stack.
// `pnpm bench --only resumable [--mib N] [--rounds N] [--chunk-mib N] [--store local|s3]`: tus against the
// single signed PUT for the same bytes on the local store and on S3 (scripts/bench/resumable.ts).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Measurer } from './bench/measure';
import { measureMixed } from './bench/mixed';
import { measureScale, scaleMarkdown } from './bench/scale';
import { benchOptions, CONNECTIONS, MIXED_CONNECTIONS, SEARCH_CONNECTIONS, type BenchOptions } from './bench/options';
import { markdownReport, type Report } from './bench/report';
import { HELLO, measureRoute, roundsOf, routeSpecs } from './bench/routes';
import { sanityOf } from './bench/sanity';
import { measureSpread } from './bench/spread';
import { startStack, type Stack } from './bench/stack';
import { measureStreams } from './bench/streams';
import { Teardown } from './bench/teardown';
import { measureWorkers } from './bench/workers';

const log = (message: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);

function emptyReport(options: BenchOptions): Report {
  return {
    date: new Date().toISOString(),
    quick: options.quick,
    cores: os.availableParallelism(),
    machine: `${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'}, node ${process.version}`,
    settings: { ...options.settings, connections: CONNECTIONS, searchConnections: SEARCH_CONNECTIONS, mixedConnections: MIXED_CONNECTIONS },
    routes: [],
  };
}

/** The route figures wanted, and with any of them the hello, which the sanity line needs. */
async function measureRoutes(stack: Stack, measurer: Measurer, options: BenchOptions, report: Report): Promise<void> {
  const all = routeSpecs(stack);
  const specs = all.filter((route) => options.wanted(route.name));
  const hello = all.find((route) => route.name === HELLO);
  if (specs.length > 0 && hello && !specs.includes(hello)) specs.push(hello);
  for (const route of specs) {
    log(`${route.name}: warming up, then ${roundsOf(route, measurer.settings)} rounds of product and baseline, through nginx and direct`);
    report.routes.push(await measureRoute(route, stack, measurer));
  }
  report.sanity = sanityOf(report.routes);
}

async function measureStreamFigures(stack: Stack, options: BenchOptions): Promise<Report['streams']> {
  const { streamMiB, streamRounds } = options.settings;
  log(`streams: ${streamMiB.join(', ')} MiB`);
  const figures = await measureStreams({
    sizesMiB: streamMiB,
    rounds: streamRounds,
    product: { port: stack.product.direct, host: stack.host, token: stack.token },
    baselinePort: stack.baseline.direct,
    diskDir: stack.workDir,
  });
  return figures.map((f) => {
    const upload = f.uploadMBps.product / f.uploadMBps.baseline;
    const download = f.downloadMBps.product / f.downloadMBps.baseline;
    return { ...f, uploadRatio: upload, downloadRatio: download, target: 0.8, met: upload >= 0.8 && download >= 0.8 };
  });
}

async function measureAll(stack: Stack, options: BenchOptions): Promise<Report> {
  const measurer = new Measurer(stack.workDir, options.settings, stack.backends);
  const report = emptyReport(options);
  await measureRoutes(stack, measurer, options, report);
  if (options.wanted('spread')) {
    log(`file GET over ${stack.spread.length} instances vs one instance`);
    const target = { port: stack.product.direct, pid: stack.product.pid };
    const instances = stack.spread.map((s) => ({ ...s, fileId: 'one.txt' }));
    Object.assign(report, await measureSpread(target, instances, measurer, log));
  }
  if (options.wanted('mixed')) {
    log('mixed traffic through nginx');
    report.mixed = await measureMixed(stack, measurer);
  }
  if (options.wanted('workers')) {
    log('GATEWAY_WORKERS=1 vs 2 (the gateway run alone)');
    report.workers = await measureWorkers(stack, measurer);
  }
  if (options.wanted('streams')) report.streams = await measureStreamFigures(stack, options);
  return report;
}

function writeReport(report: Report): void {
  const markdown = markdownReport(report);
  const outDir = path.resolve(__dirname, '..', 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const stamp = report.date.replace(/[:.]/g, '-');
  writeFileSync(path.join(outDir, `bench-${stamp}.json`), JSON.stringify(report, null, 2));
  writeFileSync(path.join(outDir, `bench-${stamp}.md`), markdown);
  console.log(markdown);
  console.log(`\nwritten: bench-results/bench-${stamp}.json and .md`);
}

/** BENCH_LOGS=<dir>: the processes' logs (and nginx's folders) are kept there; the work folder goes. */
function keepLogs(workDir: string): void {
  if (!process.env.BENCH_LOGS) return;
  const dir = path.resolve(process.env.BENCH_LOGS);
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(workDir)) {
    if (name.endsWith('.log') || name.startsWith('nginx-')) cpSync(path.join(workDir, name), path.join(dir, name), { recursive: true });
  }
}

/**
 * `--only export` and `--only resumable` run by themselves, each in a process of its own (the export
 * measures its RSS; the resumable bench starts a product per store): the script's name, or undefined.
 */
function standalone(argv: string[]): string | undefined {
  const at = argv.indexOf('--only');
  const name = at >= 0 ? argv[at + 1]?.toLowerCase() : undefined;
  return name === 'export' || name === 'resumable' ? name : undefined;
}

/** `--only scale`: its own database and gateways; bench-results/scale-<time>.json and .md. */
async function runScale(options: BenchOptions, workDir: string, teardown: Teardown): Promise<void> {
  const figure = await measureScale(workDir, new Measurer(workDir, options.settings), teardown, log);
  const markdown = scaleMarkdown(figure, emptyReport(options).machine);
  const outDir = path.resolve(__dirname, '..', 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  writeFileSync(path.join(outDir, `scale-${stamp}.json`), JSON.stringify(figure, null, 2));
  writeFileSync(path.join(outDir, `scale-${stamp}.md`), markdown);
  console.log(markdown);
  console.log(`\nwritten: bench-results/scale-${stamp}.json and .md`);
}

async function main(): Promise<void> {
  const alone = standalone(process.argv);
  if (alone) {
    const rest = process.argv.slice(2).filter((arg, i, all) => arg !== '--only' && all[i - 1] !== '--only');
    const run = spawnSync(process.execPath, [...process.execArgv, path.join(__dirname, 'bench', `${alone}.ts`), ...rest], {
      stdio: 'inherit',
    });
    if (run.status !== 0) throw new Error(`the ${alone} bench failed`);
    return;
  }
  const options = benchOptions(process.argv);
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'pds-bench-'));
  const teardown = new Teardown(log);
  teardown.add(async () => {
    keepLogs(workDir);
    rmSync(workDir, { recursive: true, force: true });
  });
  try {
    if (options.scaleOnly) return await runScale(options, workDir, teardown);
    const report = await measureAll(await startStack(workDir, options.settings, teardown, log), options);
    writeReport(report);
    if (report.sanity && report.sanity.cheaperThanHello.length > 0) throw new Error('the sanity check failed: see the report');
  } finally {
    await teardown.run();
  }
}

main().catch((error: unknown) => {
  console.error(`pnpm bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
