// The processes `pnpm bench` measures: the product as `pnpm start` runs it, the gateway alone with
// GATEWAY_WORKERS, and the bare baseline. Each writes its output to a file in the bench's temp folder.
// And what /proc says of processes and of the machine: CPU time, resident memory, busy time, load.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { waitForPort } from '../lib/ports';

const ROOT = path.resolve(__dirname, '../..');

export interface Running {
  name: string;
  process: ChildProcess;
  port: number;
  log: string;
  stop(): Promise<void>;
}

/** Runs a TypeScript entry point of this repository with tsx (as `pnpm start` does) until stop(). */
export async function startProcess(
  name: string,
  entry: string,
  port: number,
  env: Record<string, string>,
  workDir: string,
  /** `collectable`: full GCs on SIGUSR2 (gc-on-signal.ts), for collectedResidentBytes. */
  options: { collectable?: boolean } = {},
): Promise<Running> {
  const log = path.join(workDir, `${name}.log`);
  const out = openSync(log, 'a');
  // BENCH_CPU_PROF=<dir>: each process writes a V8 CPU profile in <dir>/<name>/ when it stops (the largest file is the main thread's) (open it in Chrome's DevTools).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF, name)}`] : [];
  // BENCH_NODE_FLAGS: more flags for every measured process, e.g. `--trace-gc` (its output goes to the process's log).
  const extra = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const collectable = options.collectable ? ['--expose-gc', '--import', path.join(ROOT, 'scripts/bench/gc-on-signal.ts')] : [];
  const child = spawn(
    process.execPath,
    [...profile, ...extra, '--conditions=@pds/source', '--import', 'tsx', ...collectable, path.join(ROOT, entry)],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', out, out],
    },
  );
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await gone;
    clearTimeout(timer);
  };
  try {
    await Promise.race([
      waitForPort(port, '127.0.0.1', 120_000),
      gone.then(() => {
        throw new Error(`${name} exited during start-up; see ${log}:\n${readFileSync(log, 'utf8').slice(-2000)}`);
      }),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { name, process: child, port, log, stop };
}

/** Resident memory of a process in bytes (Linux). */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return Number(kib ?? 0) * 1024;
}

/**
 * RSS right after full garbage collections of a process started `collectable`: without them RSS also
 * counts whatever garbage V8 happens to hold. Read once a second until two readings agree within 0.5 %.
 */
export async function collectedResidentBytes(pid: number): Promise<number> {
  process.kill(pid, 'SIGUSR2');
  let last = 0;
  for (let waited = 0; waited < 10; waited++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = residentBytes(pid);
    if (Math.abs(now - last) < now * 0.005) return now;
    last = now;
  }
  return last;
}

/** Clock ticks a second of /proc's CPU times (USER_HZ: 100 on every Linux this runs on). */
const TICKS = 100;

/** CPU seconds (user + system) a process has used so far (Linux). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

/** The same, or undefined once the process has exited (a PostgreSQL backend may end during a run). */
export function cpuSecondsIfRunning(pid: number): number | undefined {
  try {
    return cpuSeconds(pid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH') return undefined;
    throw error;
  }
}

/**
 * CPU seconds every core of the machine has been busy so far: /proc/stat's first line, user, nice,
 * system, irq and softirq (guest time is inside user; steal is the hypervisor's other guests).
 */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq) / TICKS;
}

/** The machine's load average over the last minute. */
export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

/** The same for a process and its living children (nginx's master and its workers). */
export function treeCpuSeconds(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  return cpuSeconds(pid) + children.reduce((sum, child) => sum + treeCpuSeconds(child), 0);
}
