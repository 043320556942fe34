import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Resolves once something accepts TCP connections on the port, or rejects after the timeout. */
export async function waitForPort(port: number, host = '127.0.0.1', timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, host, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** True when nothing listens on 127.0.0.1:port right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The port kept in `file` when it is still free, else a new free one written there: a server that
 * keeps its data across restarts keeps its address too (clients and saved URLs stay valid).
 */
export async function keptPort(file: string): Promise<number> {
  const kept = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : NaN;
  if (Number.isInteger(kept) && kept > 0 && (await isPortFree(kept))) return kept;
  const port = await freePort();
  writeFileSync(file, `${port}\n`);
  return port;
}
