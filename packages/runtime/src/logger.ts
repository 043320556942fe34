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
