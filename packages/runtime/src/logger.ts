import { writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Paths never written to logs: credentials travel in these headers and fields. */
const REDACT = [
  'req.headers["x-auth-token"]',
  'req.headers.password',
  'req.headers.pass',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["x-auth-token"]',
  'password',
  'pass',
  'token',
  'accessToken',
];

/**
 * Log lines wait in memory while stdout is busy, but never more than this: under a flood the
 * asynchronous writer would otherwise fall tens of thousands of lines behind and grow the heap.
 * Lines that do not fit are dropped and counted (see stdoutDestination).
 */
export const LOG_BUFFER_BYTES = 4 * 1024 * 1024;

let stdout: ReturnType<typeof pino.destination> | undefined;

/**
 * One asynchronous stdout writer per process, shared by every logger: a log call never waits for the
 * terminal or pipe. pino flushes it synchronously on process exit; flushLogs flushes it before a graceful stop.
 */
function stdoutDestination(): ReturnType<typeof pino.destination> {
  if (stdout) return stdout;
  // No minimum batch: a quiet process shows its lines at once; under load, lines that arrive while a
  // write is in flight are batched into the next one.
  const destination = pino.destination({ dest: 1, sync: false, maxLength: LOG_BUFFER_BYTES });
  let dropped = 0;
  destination.on('drop', () => {
    if (dropped++ > 0) return;
    // Say once per second how many lines were lost, instead of losing that too.
    setTimeout(() => {
      destination.write(`${JSON.stringify({ level: 40, time: Date.now(), msg: `log buffer full: ${dropped} lines dropped` })}\n`);
      dropped = 0;
    }, 1000).unref();
  });
  stdout = destination;
  return destination;
}

/** Each logger's destination and name, for the lines written without pino (access-log.ts). */
const destinations = new WeakMap<Logger, { destination: DestinationStream; name?: string }>();

/** Where a logger made by createLogger writes, or undefined for a silent one. */
export function destinationOf(logger: Logger): { destination: DestinationStream; name?: string } | undefined {
  return destinations.get(logger);
}

/**
 * How long a line of a batch waits for others, and how much text goes out at once at most. Written a
 * turn of the event loop at a time, a loaded gateway made 0.23 fs.write and 0.63 futex calls a request
 * (each write a hop to libuv's thread pool and back), batched 0.08 and 0.29 (docs/performance.md).
 */
export const BATCH_MS = 25;
export const BATCH_LENGTH = 16 * 1024;

/**
 * Lines written many times a second (the access log's), held to go out together: when BATCH_LENGTH
 * characters wait, BATCH_MS after the first, on flushLogs and at exit. A crash (kill -9) loses what waits, at
 * most BATCH_MS of lines, as it loses what the asynchronous destination holds.
 */
export class LineBatch {
  private pending = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly destination: DestinationStream) {}

  add(line: string): void {
    if (this.pending === '') {
      this.timer = setTimeout(this.flush, BATCH_MS).unref();
      waiting.add(this);
    }
    this.pending += line;
    if (this.pending.length >= BATCH_LENGTH) this.flush();
  }

  readonly flush = (): void => {
    const text = this.take();
    if (text !== '') this.destination.write(text);
  };

  /** At exit, when no asynchronous write completes: straight to a file descriptor's destination (stdout's). */
  flushSync(): void {
    const text = this.take();
    const fd = (this.destination as { fd?: unknown }).fd;
    if (text === '') return;
    if (typeof fd === 'number' && fd >= 0) writeSync(fd, text);
    else this.destination.write(text);
  }

  private take(): string {
    clearTimeout(this.timer);
    this.timer = undefined;
    waiting.delete(this);
    const text = this.pending;
    this.pending = '';
    return text;
  }
}

/** The batches holding lines, for flushLogs and the exit. */
const waiting = new Set<LineBatch>();
// At exit no asynchronous write is started any more, so the batches go out synchronously (pino does the same
// for stdout's buffer); a line already in an asynchronous write may reach the pipe after them.
process.on('exit', () => {
  for (const batch of waiting) batch.flushSync();
});

const batches = new WeakMap<Logger, LineBatch | null>();

/** The logger's batch of lines (one per logger), or null for a silent logger. */
export function lineBatchOf(logger: Logger): LineBatch | null {
  let batch = batches.get(logger);
  if (batch === undefined) {
    const out = destinations.get(logger);
    batch = out ? new LineBatch(out.destination) : null;
    batches.set(logger, batch);
  }
  return batch;
}

export function createLogger(options: { level?: string; name?: string; destination?: DestinationStream } = {}): Logger {
  const level = options.level ?? 'info';
  const destination = options.destination ?? (level === 'silent' ? undefined : stdoutDestination());
  const logger = pino(
    {
      name: options.name,
      level,
      redact: { paths: REDACT, censor: '***' },
      base: undefined,
    },
    destination,
  );
  if (destination) destinations.set(logger, { destination, name: options.name });
  return logger;
}

/** Writes out every buffered log line; call it last in a graceful shutdown. */
export function flushLogs(): Promise<void> {
  for (const batch of waiting) batch.flush();
  const destination = stdout;
  if (!destination) return Promise.resolve();
  return new Promise((resolve) => {
    try {
      // A failed write is not worth failing the shutdown for.
      destination.flush(() => resolve());
    } catch {
      resolve();
    }
  });
}
