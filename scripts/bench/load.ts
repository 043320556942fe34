// The load generator: wrk (Debian's `wrk`, installed when missing), in its own process, one thread,
// keep-alive connections, no pipelining; its own CPU time is read too, to take it out of the machine's. Each run cycles through a fixed list of requests. An answer
// slower than 10 s counts as an error; anything faster shows in the latency figures.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensureDebianCommand } from '../lib/debian';

export interface BenchRequest {
  method: string;
  path: string;
  /** Host included: every request names its host itself. */
  headers: Record<string, string>;
  body?: string;
  /**
   * Requests of a run that name groups also get each group's own latency figures (groups in
   * LoadResult): the server must echo X-Request-Id, which the script sets to tell the answers apart.
   */
  group?: string;
}

/** Milliseconds. */
export interface Latency {
  p50: number;
  p95: number;
  p99: number;
}

export interface LoadResult extends Latency {
  requests: number;
  seconds: number;
  rps: number;
  /** Socket errors, timeouts and answers outside 2xx/3xx. */
  errors: number;
  /** The errors by kind: connect, read, write, timeout, status. */
  errorKinds?: Record<string, number>;
  /** CPU seconds the load generator itself used (wrk's user + system time, all its threads). */
  loadGeneratorCpuSeconds?: number;
  // CPU per request, in µs, set by the caller that knows the processes (measure.ts):
  /** The server process (the gateway process: for the product gateway, dex and worker, as `pnpm start` runs them). */
  cpuUsPerRequest?: number;
  /** The proxy in front of it (nginx, all its processes). */
  proxyCpuUsPerRequest?: number;
  /** The PostgreSQL backends of the server's connections. */
  databaseCpuUsPerRequest?: number;
  /** The Redis server that serves it alone. */
  redisCpuUsPerRequest?: number;
  /** Serving: the server, its proxy, its backends and its Redis together. */
  servingCpuUsPerRequest?: number;
  /** Every core's busy time less the load generator's: whatever else ran on the machine counts too. */
  machineCpuUsPerRequest?: number;
  /** What else ran, in cores over the run: the machine's busy time less the load generator and the serving processes. */
  otherCores?: number;
  /** The machine's 1-minute load average at the end of the run. */
  loadAverage?: number;
  /** Per group of requests (BenchRequest.group): how many were answered, how many with 4xx/5xx, their latency. */
  groups?: Record<string, Latency & { requests: number; errors: number }>;
}

export interface LoadOptions {
  port: number;
  requests: BenchRequest[];
  connections: number;
  seconds: number;
  /** Folder for the generated request scripts. */
  workDir: string;
}

let scripts = 0;

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const wrk = ensureDebianCommand('wrk', 'wrk');
  const file = path.join(options.workDir, `load-${scripts++}.lua`);
  writeFileSync(file, wrkScript(options.requests));
  // Under bash, whose `times` then prints wrk's CPU time (children's user and system, last line).
  const out = await capture('bash', [
    '-c',
    '"$0" "$@"; status=$?; times; exit $status',
    wrk,
    '-t1',
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    '--timeout',
    '10s',
    '-s',
    file,
    `http://127.0.0.1:${options.port}`,
  ]);
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`wrk printed no result:\n${out}`);
  return { ...(JSON.parse(line.slice('RESULT '.length)) as LoadResult), loadGeneratorCpuSeconds: childrenCpuSeconds(out) };
}

/** The CPU seconds of bash's children from the last line of its `times` (`0m1.234s 0m0.056s`). */
export function childrenCpuSeconds(out: string): number {
  const times = out.trimEnd().split('\n').at(-1) ?? '';
  const match = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/.exec(times);
  if (!match) throw new Error(`no CPU times after wrk's output:\n${out}`);
  const [, um, us, sm, ss] = match.map(Number) as [number, number, number, number, number];
  return um * 60 + us + sm * 60 + ss;
}

/**
 * Lua for wrk: the requests formatted in init() and taken in turn; done() prints one JSON line. They
 * must not be formatted when the script loads: wrk.format fills in a missing Host from wrk.headers,
 * which wrk sets only after loading the script; a request formatted earlier went out without Host,
 * and node:http answered each with 400 and closed the connection (the bare hello of 2026-11-25).
 */
const SPECS_PER_FUNCTION = 5_000;

export function wrkScript(requests: BenchRequest[]): string {
  const lua = (s: string) => JSON.stringify(s); // JSON string escapes are valid Lua escapes for this ASCII
  const groups = [...new Set(requests.map((r) => r.group).filter((g) => g !== undefined))];
  const specs = requests.map((r) => {
    const headers = Object.entries(r.headers)
      .map(([k, v]) => `[${lua(k)}]=${lua(v)}`)
      .join(',');
    const group = r.group === undefined ? '' : `, group=${groups.indexOf(r.group) + 1}`;
    return `{method=${lua(r.method)}, path=${lua(r.path)}, headers={${headers}}, body=${r.body === undefined ? 'nil' : lua(r.body)}${group}}`;
  });
  // A Lua function holds at most 65,536 constants: 100,000 requests (the scale part's spread) in one
  // table constructor failed to load. So the list is filled by functions of SPECS_PER_FUNCTION each.
  const fills: string[] = [];
  for (let at = 0; at < specs.length; at += SPECS_PER_FUNCTION) {
    const assignments = specs.slice(at, at + SPECS_PER_FUNCTION).map((spec) => `t[#t + 1] = ${spec}`);
    fills.push(`;(function() local t = specs\n${assignments.join('\n')}\nend)()`);
  }
  return `local specs = {}
${fills.join('\n')}
local groups = {${groups.map(lua).join(',')}}
local n = #specs
local i = 0
local reqs = {}
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function(args)
  for k, s in ipairs(specs) do reqs[k] = wrk.format(s.method, s.path, s.headers, s.body) end
end
${groups.length > 0 ? groupedRequests() : 'request = function()\n  i = i % n + 1\n  return reqs[i]\nend'}
done = function(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format('RESULT {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50":%.3f,"p95":%.3f,"p99":%.3f,"errors":%d,' ..
    '"errorKinds":{"connect":%d,"read":%d,"write":%d,"timeout":%d,"status":%d}%s}\\n',
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.timeout + e.status, e.connect, e.read, e.write, e.timeout, e.status,
    ${groups.length > 0 ? 'groupsJson()' : "''"}))
end
`;
}

/**
 * Each request gets X-Request-Id "b<sequence>" and its start time; the answer's echoed id finds it
 * again, so each group's latencies are its own (wrk's figures mix every request of the run).
 */
function groupedRequests(): string {
  return `local ffi = require("ffi")
ffi.cdef[[ typedef struct { long tv_sec; long tv_nsec; } bench_timespec; int clock_gettime(int clock, bench_timespec *tp); ]]
local ts = ffi.new("bench_timespec")
local function now() ffi.C.clock_gettime(1, ts); return tonumber(ts.tv_sec) * 1e3 + tonumber(ts.tv_nsec) / 1e6 end
local seq = 0
local started = {}
-- Globals, one flat list per group: done() reads them with thread:get, which copies no nested table.
failures = {}
for g = 1, #groups do _G["latencies" .. g] = {}; failures[g] = 0 end
request = function()
  i = i % n + 1
  local s = specs[i]
  seq = seq + 1
  local id = "b" .. seq
  s.headers["X-Request-Id"] = id
  started[id] = {now(), s.group}
  return wrk.format(s.method, s.path, s.headers, s.body)
end
response = function(status, headers, body)
  local id = headers["X-Request-Id"] or headers["x-request-id"]
  local start = id and started[id]
  if not start then return end
  started[id] = nil
  local g = start[2]
  local list = _G["latencies" .. g]
  list[#list + 1] = now() - start[1]
  if status >= 400 then failures[g] = failures[g] + 1 end
end
function groupsJson()
  local parts = {}
  for g, name in ipairs(groups) do
    local all, failed = {}, 0
    for _, t in ipairs(threads) do
      for _, v in ipairs(t:get("latencies" .. g)) do all[#all + 1] = v end
      failed = failed + t:get("failures")[g]
    end
    table.sort(all)
    local function at(p) return #all == 0 and 0 or all[math.max(1, math.ceil(#all * p / 100))] end
    parts[#parts + 1] = string.format('"%s":{"requests":%d,"errors":%d,"p50":%.3f,"p95":%.3f,"p99":%.3f}',
      name, #all, failed, at(50), at(95), at(99))
  end
  return ',"groups":{' .. table.concat(parts, ',') .. '}'
end`;
}

function capture(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    // 'close', not 'exit': the output may still be arriving when the process has exited.
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`the load generator exited with ${code}:\n${out}`))));
  });
}
