// A TCP proxy that holds every reply of the server behind it for a while: a Redis that answers, only
// slowly (a loaded machine, a far network). Requests pass at once; replies keep their order.
import net from 'node:net';

export interface SlowProxy {
  /** Where clients connect: `redis://127.0.0.1:<port>` for a Redis behind it. */
  port: number;
  /** How long each reply is held, in ms; may change while it runs. */
  delayMs: number;
  /** Cuts every connection through it (a Redis restart, as its clients see it); new ones are taken. */
  cut(): void;
  close(): Promise<void>;
}

export async function slowProxy(target: { host: string; port: number }, delayMs: number): Promise<SlowProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.createConnection(target);
    sockets.add(client).add(upstream);
    // Each reply chunk leaves `delayMs` after it came, and never before the one before it.
    let last = 0;
    upstream.on('data', (chunk: Buffer) => {
      const at = Math.max(Date.now() + proxy.delayMs, last);
      last = at;
      setTimeout(() => client.writable && client.write(chunk), at - Date.now());
    });
    client.on('data', (chunk: Buffer) => upstream.writable && upstream.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: SlowProxy = {
    port: (server.address() as net.AddressInfo).port,
    delayMs,
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return proxy;
}
