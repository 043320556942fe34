// How every process starts and stops: listen, then on SIGTERM/SIGINT stop accepting, let in-flight
// requests and jobs finish (bounded), close pools and connections, and exit. One copy for all.
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { answerClientErrors } from './client-errors';
import { portHolder } from './port-holder';

export interface Stoppable {
  /** Stops gracefully: in-flight work finishes, then connections and pools close. Safe to call twice. */
  close(): Promise<void>;
  /** How long `close` lets in-flight work run (SHUTDOWN_TIMEOUT); past it plus a margin the process exits anyway. */
  graceMs?: number;
}

/**
 * Resolves with the listening server once bound; rejects, naming the address, when the port cannot be
 * bound. Requests Node's parser refuses get the `{ error, message }` body too (client-errors.ts).
 * `options`: Node's, such as the ServerResponse class (the apps pass @pds/http's EnvelopedResponse).
 */
export function listen(app: RequestListener, port: number, host: string, options: ServerOptions = {}): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(options, app);
    server.once('error', (error) => reject(listenError(error, host, port)));
    answerClientErrors(server);
    server.listen(port, host, () => resolve(server));
  });
}

/** Why `host:port` could not be listened on, in words that name it (a taken port above all, and what holds it when that can be learned). */
export function listenError(error: Error, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    const holder = portHolder(port);
    return new Error(
      `port ${port} on ${host} is already in use${holder ? ` by ${holder}` : ''} (EADDRINUSE): stop what listens there, or choose another port`,
    );
  }
  return new Error(`cannot listen on ${host}:${port}: ${error.message}`, { cause: error });
}

/** The port a listening server got (the configured one, or the one the OS chose for port 0). */
export function boundPort(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

/**
 * Stops accepting connections and waits for in-flight requests; idle keep-alive sockets close at once,
 * and whatever is still open after `graceMs` is cut.
 */
export async function closeServer(server: Server, graceMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    await closed;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `close` once, however often it is asked for; later calls get the same promise. */
export function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}

/** Where a process reports its own stop (a pino logger fits); stderr when none is given. */
export interface ProcessLog {
  info(message: string): void;
  error(message: string): void;
}

const stderrLog: ProcessLog = { info: (message) => console.error(message), error: (message) => console.error(message) };

/**
 * The body of every process's main: starts it, and on SIGTERM or SIGINT closes it and exits 0. A close
 * that hangs past its grace (plus a margin for pools) exits 1; a second signal exits at once. A start
 * that fails prints its message, one line on stderr (a taken port names the port), and exits 1. A
 * signal that comes while it starts is answered once the start is over: what it started is closed
 * then, never left running (a database server it started, say).
 * `repeatSignalExits: false` ignores a second signal instead: for a cluster worker, which gets Ctrl-C from
 * the terminal and the primary's SIGTERM for the same stop (the primary enforces the deadline).
 */
export function runProcess(
  start: () => Promise<Stoppable>,
  options: {
    repeatSignalExits?: boolean;
    log?: ProcessLog;
    /** Says why the start failed, before the exit; one line on stderr when absent. */
    onStartFailure?: (message: string) => Promise<void> | void;
  } = {},
): void {
  const log = options.log ?? stderrLog;
  const sayFailure = options.onStartFailure ?? ((message: string) => console.error(message));
  let stopping = false;
  const starting = Promise.resolve().then(start);
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      if (options.repeatSignalExits ?? true) process.exit(1);
      return;
    }
    stopping = true;
    log.info(`${signal}: stopping`);
    void starting.then(
      (running) => {
        const graceMs = running.graceMs ?? 10_000;
        setTimeout(() => {
          log.error(`still stopping after ${graceMs + 5000} ms; exiting`);
          process.exit(1);
        }, graceMs + 5000).unref();
        running.close().then(
          () => process.exit(0),
          (error: unknown) => {
            log.error(`stopping failed: ${error instanceof Error ? error.message : String(error)}`);
            process.exit(1);
          },
        );
      },
      // The start failed: the handler below says why and exits.
      () => undefined,
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  starting.catch(async (error: unknown) => {
    await sayFailure(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
