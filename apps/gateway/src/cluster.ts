// GATEWAY_WORKERS > 1: one primary process forks that many gateway processes, which share the listening
// port through node:cluster (the primary hands out connections). The gateway keeps every cross-request
// state in PostgreSQL or Redis (rate limits, cache invalidation), so its processes need not talk to each other.
import cluster, { type Worker } from 'node:cluster';
import type { ProcessLog } from '@pds/runtime';

/** A worker that dies sooner than this after its start is restarted only after RESTART_DELAY_MS (no crash loop). */
const QUICK_DEATH_MS = 10_000;
const RESTART_DELAY_MS = 2_000;
/** Beyond the workers' own grace (SHUTDOWN_TIMEOUT), before they are killed. */
const STOP_MARGIN_MS = 5_000;

/** What a worker tells the primary when it cannot start: the primary prints the first one alone. */
interface StartFailed {
  kind: 'start-failed';
  message: string;
}

/**
 * In a worker: hands the reason its start failed to the primary (runProcess's onStartFailure). Every
 * worker fails the same way (a taken port, an unreachable database): the operator reads it once.
 */
export function tellPrimary(message: string): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) {
      console.error(message);
      resolve();
      return;
    }
    process.send({ kind: 'start-failed', message } satisfies StartFailed, undefined, {}, () => resolve());
  });
}

/** True in the process that should serve requests itself (the only process, or a forked worker). */
export function servesRequests(workers: number): boolean {
  return workers <= 1 || !cluster.isPrimary;
}

/**
 * In the primary: forks `workers` gateway processes, restarts any that exits unasked after it listened,
 * and on SIGTERM or SIGINT passes SIGTERM to each (they stop gracefully) and exits once all are gone. A
 * worker that fails before it listens (a taken port, an unreachable database) stops them all with exit
 * code 1, its reason printed once: every other one would fail the same way.
 */
export function superviseGatewayWorkers(workers: number, graceMs: number, log: ProcessLog): void {
  const startedAt = new Map<Worker, number>();
  const listened = new WeakSet<Worker>();
  const fork = () => startedAt.set(cluster.fork(), Date.now());
  let stopping = false;
  let exitCode = 0;
  let failure: string | undefined;

  cluster.on('listening', (worker) => listened.add(worker));
  cluster.on('message', (_worker, message: Partial<StartFailed> | undefined) => {
    if (message?.kind !== 'start-failed' || failure !== undefined) return;
    failure = String(message.message);
    console.error(failure);
  });
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) {
      if (startedAt.size === 0) process.exit(exitCode);
      return;
    }
    if (!listened.has(worker) && signal === null && code !== 0) {
      // The worker said why itself (tellPrimary), unless it died before it could.
      if (failure === undefined) log.error(`gateway worker ${worker.process.pid} could not start (code ${code}); stopping`);
      stop(1);
      return;
    }
    log.error(`gateway worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`);
    setTimeout(fork, lived < QUICK_DEATH_MS ? RESTART_DELAY_MS : 0);
  });

  const stop = (code = 0) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    if (startedAt.size === 0) process.exit(exitCode);
    for (const worker of startedAt.keys()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const worker of startedAt.keys()) worker.process.kill('SIGKILL');
      process.exit(1);
    }, graceMs + STOP_MARGIN_MS).unref();
  };
  process.once('SIGTERM', () => stop());
  process.once('SIGINT', () => stop());

  for (let i = 0; i < workers; i++) fork();
}
