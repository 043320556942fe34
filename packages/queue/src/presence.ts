// Which processes of the cluster are running: each gateway, dex and worker process writes a line about
// itself into one Redis hash every PRESENCE_EVERY_MS, and the operator's console reads the hash, showing
// only the lines written recently. One key (hash-tagged on a Redis Cluster like the queues), so a reader
// needs no SCAN across nodes; a process that died simply stops being seen.
import { hostname } from 'node:os';
import type { RedisClient } from './connections';
import { queueKeyPrefix } from './connections';

export const PRESENCE_EVERY_MS = 10_000;
/** A process not seen for this long is no longer listed (three missed beats). */
export const PRESENCE_STALE_MS = 3 * PRESENCE_EVERY_MS;

export type ProcessKind = 'gateway' | 'gateway-worker' | 'dex' | 'dex-worker';

export interface ProcessPresence {
  kind: ProcessKind;
  /** kind@host:pid (`pnpm start` runs every kind in one process) */
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  seenAt: string;
  /** The queues a worker takes jobs from. */
  queues?: string[];
}

const keyOf = (connection: RedisClient, prefix: string) => `${queueKeyPrefix(connection, prefix)}:processes`;

/**
 * Announces this process until the returned stop is called (which removes its line). A failed write is
 * ignored: Redis being down is shown by everything else, and the next beat writes again.
 */
export function announcePresence(
  connection: RedisClient,
  prefix: string,
  process: { kind: ProcessKind; queues?: string[] },
  clock: () => Date = () => new Date(),
): () => Promise<void> {
  const host = hostname();
  const id = `${process.kind}@${host}:${globalThis.process.pid}`;
  const startedAt = clock().toISOString();
  const key = keyOf(connection, prefix);
  const beat = () =>
    void connection
      .hset(key, id, JSON.stringify({ ...process, id, host, pid: globalThis.process.pid, startedAt, seenAt: clock().toISOString() }))
      .catch(() => undefined);
  beat();
  const timer = setInterval(beat, PRESENCE_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await connection.hdel(key, id).catch(() => undefined);
  };
}

/** The processes seen recently, by kind then id; lines of processes gone quiet are removed as they are found. */
export async function runningProcesses(connection: RedisClient, prefix: string, now: Date = new Date()): Promise<ProcessPresence[]> {
  const key = keyOf(connection, prefix);
  const lines = await connection.hgetall(key);
  const running: ProcessPresence[] = [];
  const stale: string[] = [];
  for (const [id, text] of Object.entries(lines)) {
    let line: ProcessPresence | undefined;
    try {
      line = JSON.parse(text) as ProcessPresence;
    } catch {
      // A line this code did not write: dropped below like a stale one.
    }
    if (line && now.getTime() - Date.parse(line.seenAt) < PRESENCE_STALE_MS) running.push(line);
    else stale.push(id);
  }
  if (stale.length > 0) await connection.hdel(key, ...stale).catch(() => undefined);
  return running.sort((a, b) => a.kind.localeCompare(b.kind) || a.id.localeCompare(b.id));
}
