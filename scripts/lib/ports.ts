import { randomInt } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';

/**
 * Where free ports are chosen: below the kernel's ephemeral range (Linux: 32768–60999), which it hands
 * out by itself to every outgoing connection and every bind to port 0. A port taken from that range and
 * bound only later (a server started after its port was chosen, or started again on it) could meanwhile
 * be given to any connection of the machine meanwhile. Below it, only another choice made here can take it.
 */
const CHOSEN = { low: 10_000, high: ephemeralStart() - 1 };
/** This process's choices: never handed out twice. */
const chosen = new Set<number>();

function ephemeralStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago, outside the kernel's ephemeral range. */
export async function freePort(): Promise<number> {
  // A kernel whose ephemeral range starts low leaves no room below it: the kernel then chooses.
  if (CHOSEN.high - CHOSEN.low < 1000) return portTheKernelChooses();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = randomInt(CHOSEN.low, CHOSEN.high + 1);
    if (chosen.has(port) || !(await isPortFree(port))) continue;
    chosen.add(port);
    return port;
  }
  throw new Error(`no free port between ${CHOSEN.low} and ${CHOSEN.high} on 127.0.0.1`);
}

function portTheKernelChooses(): Promise<number> {
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
