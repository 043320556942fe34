// Server processes that test and start-up scripts run as children: stopping them, their memory, and a
// group of daemons that dies with its parent even when the parent is killed with SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** SIGTERM (or the signal given), then SIGKILL after 3 s; resolves once the child has exited. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

/** Resident memory of some processes, summed (Linux): now, and the sum of each one's peak. */
export interface Memory {
  rssBytes: number;
  peakBytes: number;
}

export function memoryOf(pids: number[]): Memory {
  const memory = { rssBytes: 0, peakBytes: 0 };
  for (const pid of pids) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      continue; // exited (a replica a test stopped)
    }
    memory.rssBytes += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    memory.peakBytes += Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  }
  return memory;
}

/**
 * Throw-away daemons started one by one (each logging to `<logDir>/<name>.out`), killed together. A
 * watchdog shell reads its stdin until the pipe from this process closes, which happens only when this
 * process dies (in any way, SIGKILL included), and then kills the daemons by their recorded process ids.
 */
export class DaemonGroup {
  private readonly children = new Map<string, ChildProcess>();
  private readonly pidFile: string;
  private readonly watchdog: ChildProcess;

  constructor(private readonly logDir: string) {
    this.pidFile = path.join(logDir, 'daemons.pids');
    writeFileSync(this.pidFile, '');
    this.watchdog = spawn('/bin/sh', ['-c', 'while read -r _; do :; done; kill -9 $(cat "$0") 2>/dev/null', this.pidFile], {
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  }

  /** Starts a daemon that stays in the foreground. */
  start(name: string, command: string, args: string[]): void {
    const out = openSync(path.join(this.logDir, `${name}.out`), 'a');
    const child = spawn(command, args, { stdio: ['ignore', out, out] });
    closeSync(out);
    appendFileSync(this.pidFile, `${child.pid}\n`);
    this.children.set(name, child);
  }

  /** Kills one daemon (SIGKILL, as in a crash); resolves once it has exited. */
  kill(name: string): Promise<void> {
    const child = this.children.get(name);
    if (!child) throw new Error(`no daemon ${name}`);
    return stopChild(child, 'SIGKILL');
  }

  pids(): number[] {
    return [...this.children.values()].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
  }

  /** Kills every daemon (SIGKILL: what they hold is thrown away, so a clean shutdown would only cost time). */
  async stop(): Promise<void> {
    // The watchdog goes first: it must never kill a recorded pid after its daemon has exited.
    await stopChild(this.watchdog, 'SIGKILL');
    await Promise.all([...this.children.values()].map((child) => stopChild(child, 'SIGKILL')));
  }
}
