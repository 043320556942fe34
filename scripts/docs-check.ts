// `pnpm docs:check`: runs the shell walkthroughs of README.md and docs/*.md as a reader would, against a
// fresh `pnpm start` of its own (a temporary DATA_DIR, so embedded PostgreSQL and its own Redis key prefix,
// and free ports), and fails when a command fails or prints something other than its page shows. What a
// page may write is in scripts/lib/doc-blocks.ts.
//
// Each page runs in one bash, its blocks in order, from the repository's folder, as a reader would paste
// them; so a page's variables carry from block to block, never from page to page. The pages name the
// defaults, which are rewritten for the run: the ports 8080 and 8081 (as `:8080`, `:8081`) and the data
// folder (`.data/`). curl is wrapped to keep each call's response headers, for the status the page shows.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { checkRun, shellBlocks, type DocBlock, type DocCommand } from './lib/doc-blocks';
import { freePort } from './lib/ports';

const ROOT = path.resolve(__dirname, '..');
/** Longest a page may run: its waits for dex's asynchronous pushes take seconds, not minutes. */
const PAGE_TIMEOUT_MS = 120_000;
const START_TIMEOUT_MS = 180_000;

interface Product {
  port: number;
  dexPort: number;
  dataDir: string;
  child: ChildProcess;
  output(): string;
}

/** The pages named on the command line (`pnpm docs:check docs/files.md`), or every page. */
function pages(): string[] {
  const named = process.argv.slice(2).filter((arg) => arg.endsWith('.md'));
  if (named.length > 0) return named;
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** `pnpm start` as the package script runs it, but as our own child, so that a signal reaches it. */
async function startProduct(folder: string): Promise<Product> {
  const [port, dexPort] = [await freePort(), await freePort()];
  const dataDir = path.join(folder, 'data');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    PORT: String(port),
    DEX_PORT: String(dexPort),
  };
  if (process.env.REDIS_URL) env.REDIS_URL = process.env.REDIS_URL;
  const child = spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pnpm start did not come up in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    child.stdout.on('data', () => {
      if (output.includes('PDS cluster running')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`pnpm start exited with code ${code}`));
    });
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw new Error(`${error instanceof Error ? error.message : String(error)}:\n${output}`);
  });
  return { port, dexPort, dataDir, child, output: () => output };
}

async function stopProduct(product: Product): Promise<void> {
  const exited = new Promise((resolve) => product.child.once('exit', resolve));
  product.child.kill('SIGINT');
  const timer = setTimeout(() => product.child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
  // A Redis it did not start keeps the keys under its prefix (queues, counters): remove them.
  const redis = / redis +(configured|local) (\S+)/.exec(product.output());
  const prefix = readFileSync(path.join(product.dataDir, 'queue-prefix'), 'utf8').trim();
  if (redis?.[2]) {
    const client = new Redis(redis[2], { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    for await (const keys of client.scanStream({ match: `*${prefix}*`, count: 1000 })) {
      if ((keys as string[]).length > 0) await client.del(...(keys as string[]));
    }
    client.disconnect();
  }
}

/** The page's commands as one bash script that records each command's output, exit code and headers. */
function script(commands: DocCommand[], product: Product, results: string): string {
  const rewrite = (text: string) =>
    text
      .replaceAll(':8080', `:${product.port}`)
      .replaceAll(':8081', `:${product.dexPort}`)
      .replace(/(?<![\w./-])\.data\//g, `${product.dataDir}/`);
  const steps = commands.map((command, i) =>
    [
      `__headers=${results}/${i}.headers; : > "$__headers"`,
      `{\n${rewrite(command.text)}\n} > ${results}/${i}.out 2> ${results}/${i}.err`,
      `__rc=$?; echo $__rc > ${results}/${i}.rc; [ $__rc = 0 ] || exit 0`,
    ].join('\n'),
  );
  return [`cd ${ROOT}`, `curl() { command curl -D "$__headers" "$@"; }`, ...steps].join('\n\n') + '\n';
}

/** The status of the last response the command's last curl call received. */
function lastStatus(headers: string): number | undefined {
  const statuses = [...headers.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)];
  const last = statuses.at(-1);
  return last ? Number(last[1]) : undefined;
}

/** Runs a page's script in a process group of its own (killed whole on a timeout); its scratch files go to `tmp`. */
function runBash(file: string, tmp: string, timeoutMs: number): Promise<'done' | 'timeout'> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', TMPDIR: tmp };
  const child = spawn('bash', [file], { detached: true, stdio: 'ignore', env });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(-(child.pid as number), 'SIGKILL');
      resolve('timeout');
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve('done');
    });
  });
}

/** Runs one page; returns its failures (empty when it read true). */
async function checkPage(page: string, product: Product, folder: string): Promise<string[]> {
  let blocks: DocBlock[];
  try {
    blocks = shellBlocks(readFileSync(path.join(ROOT, page), 'utf8'));
  } catch (error) {
    return [`${page}: ${error instanceof Error ? error.message : String(error)}`];
  }
  for (const block of blocks.filter((b) => b.skip)) console.log(`  skip ${page}:${block.line} (${block.skip})`);
  const commands = blocks.filter((b) => !b.skip).flatMap((b) => b.commands);
  if (commands.length === 0) return [];
  const results = path.join(folder, 'runs', page.replace(/\W/g, '_'));
  mkdirSync(results, { recursive: true });
  const file = path.join(results, 'page.sh');
  writeFileSync(file, script(commands, product, results));
  const started = Date.now();
  const tmp = path.join(results, 'tmp');
  mkdirSync(tmp);
  const outcome = await runBash(file, tmp, PAGE_TIMEOUT_MS);
  const failures: string[] = [];
  let checked = 0;
  for (const [i, command] of commands.entries()) {
    const read = (ext: string) => (existsSync(`${results}/${i}.${ext}`) ? readFileSync(`${results}/${i}.${ext}`, 'utf8') : undefined);
    const rc = read('rc');
    const where = `${page}:${command.line}`;
    const output = () =>
      `\n    stdout: ${(read('out') ?? '').trim().slice(0, 600)}\n    stderr: ${(read('err') ?? '').trim().slice(0, 600)}`;
    if (rc === undefined) {
      failures.push(
        `${where}: ${outcome === 'timeout' && read('out') !== undefined ? `still running after ${PAGE_TIMEOUT_MS} ms` : 'not run'}\n    ${command.text}`,
      );
      break;
    }
    if (rc.trim() !== '0') {
      failures.push(`${where}: exit code ${rc.trim()}\n    ${command.text}${output()}`);
      break;
    }
    if (!command.expect) continue;
    checked++;
    // What was printed, read at the ports the page shows (the run's own were rewritten into its commands).
    const printed = (read('out') ?? '').replaceAll(`:${product.port}`, ':8080').replaceAll(`:${product.dexPort}`, ':8081');
    const problem = checkRun(command.expect, { status: lastStatus(read('headers') ?? ''), stdout: printed });
    if (problem) failures.push(`${where}: ${problem}\n    ${command.text}\n    # → ${command.expect.shown}${output()}`);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`${failures.length ? '✗' : '✓'} ${page}: ${commands.length} commands, ${checked} outputs compared, ${seconds} s`);
  return failures;
}

async function main(): Promise<void> {
  const started = Date.now();
  const folder = mkdtempSync(path.join(os.tmpdir(), 'pds-docs-check-'));
  // Run as root, embedded PostgreSQL runs as the postgres user, who must reach DATA_DIR inside.
  chmodSync(folder, 0o755);
  let product: Product | undefined;
  const failures: string[] = [];
  try {
    product = await startProduct(folder);
    console.log(`pnpm start is up in ${((Date.now() - started) / 1000).toFixed(1)} s (gateway :${product.port}, dex :${product.dexPort})`);
    for (const page of pages()) failures.push(...(await checkPage(page, product, folder)));
  } finally {
    if (product) await stopProduct(product);
    rmSync(folder, { recursive: true, force: true });
  }
  for (const failure of failures) console.error(`\n${failure}`);
  console.log(
    `\ndocs:check ${failures.length ? `found ${failures.length} problem(s)` : 'passed'} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  if (failures.length) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(`docs:check failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
