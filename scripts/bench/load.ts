// The load generator, always in its own process: wrk (Debian `wrk`) when it is on PATH, else autocannon
// from npm (scripts/bench/autocannon-runner.ts). Each run cycles through a fixed list of requests. An
// answer slower than 10 s counts as an error; anything faster shows in the latency figures.
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

export interface BenchRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  /** Milliseconds. */
  p50: number;
  p95: number;
  p99: number;
  /** Socket errors, timeouts and answers outside 2xx/3xx. */
  errors: number;
  /** The errors by kind: connect, read, write, timeout, status. */
  errorKinds?: Record<string, number>;
  /** CPU time the server process spent per request (set by the caller that knows its process). */
  cpuUsPerRequest?: number;
}

export interface LoadOptions {
  port: number;
  requests: BenchRequest[];
  connections: number;
  seconds: number;
  /** Folder for the generated request scripts. */
  workDir: string;
}

let wrkPresent: boolean | undefined;
/** wrk when installed; BENCH_LOAD_GENERATOR=autocannon forces the fallback. */
export function loadGenerator(): 'wrk' | 'autocannon' {
  if (process.env.BENCH_LOAD_GENERATOR === 'autocannon') return 'autocannon';
  if (wrkPresent === undefined) {
    try {
      execFileSync('wrk', ['--version'], { stdio: 'ignore' });
      wrkPresent = true;
    } catch (error) {
      // wrk --version exits 1 after printing its version; only a missing binary is ENOENT.
      wrkPresent = (error as NodeJS.ErrnoException).code !== 'ENOENT';
    }
  }
  return wrkPresent ? 'wrk' : 'autocannon';
}

let scripts = 0;

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const file = path.join(options.workDir, `load-${scripts++}`);
  if (loadGenerator() === 'wrk') {
    writeFileSync(`${file}.lua`, wrkScript(options.requests));
    const out = await capture('wrk', [
      '-t1',
      `-c${options.connections}`,
      `-d${options.seconds}s`,
      '--timeout',
      '10s',
      '-s',
      `${file}.lua`,
      `http://127.0.0.1:${options.port}`,
    ]);
    return parseResult(out);
  }
  writeFileSync(`${file}.json`, JSON.stringify(options));
  const runner = path.join(__dirname, 'autocannon-runner.ts');
  return parseResult(await capture(process.execPath, ['--import', 'tsx', runner, `${file}.json`]));
}

function parseResult(out: string): LoadResult {
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`the load generator printed no result:\n${out}`);
  return JSON.parse(line.slice('RESULT '.length)) as LoadResult;
}

/** Lua for wrk: the requests pre-formatted, taken in turn; done() prints one JSON line. */
function wrkScript(requests: BenchRequest[]): string {
  const lua = (s: string) => JSON.stringify(s); // JSON string escapes are valid Lua escapes for this ASCII
  const entries = requests.map((r) => {
    const headers = Object.entries(r.headers)
      .map(([k, v]) => `[${lua(k)}]=${lua(v)}`)
      .join(',');
    return `wrk.format(${lua(r.method)},${lua(r.path)},{${headers}}${r.body === undefined ? '' : `,${lua(r.body)}`})`;
  });
  return `local reqs = {${entries.join(',\n')}}
local n = #reqs
local i = 0
request = function()
  i = i % n + 1
  return reqs[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format('RESULT {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50":%.3f,"p95":%.3f,"p99":%.3f,"errors":%d,' ..
    '"errorKinds":{"connect":%d,"read":%d,"write":%d,"timeout":%d,"status":%d}}\\n',
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.timeout + e.status, e.connect, e.read, e.write, e.timeout, e.status))
end
`;
}

function capture(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} exited with ${code}:\n${out}`))));
  });
}
