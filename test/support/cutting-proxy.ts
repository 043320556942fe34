// A TCP proxy in front of a server that can drop every connection through it at once, as a phone's
// network does on a train: both sockets destroyed mid-request, nothing more forwarded. It counts the
// bytes that went upstream, so a test can say how much a client sent in all.
import net from 'node:net';

export class CuttingProxy {
  /** Bytes forwarded from clients to the server, over every connection. */
  upstreamBytes = 0;
  private target = 0;
  private readonly open = new Set<net.Socket>();
  private readonly server: net.Server;

  private constructor() {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.open.add(socket);
        socket.on('close', () => this.open.delete(socket));
        // A cut is what this is for: its errors are expected.
        socket.on('error', () => undefined);
      }
      client.on('data', (chunk: Buffer) => (this.upstreamBytes += chunk.length));
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  /** A proxy listening on a free port of loopback; `forwardTo` sets where it forwards (it may be known later). */
  static async start(): Promise<CuttingProxy> {
    const proxy = new CuttingProxy();
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  forwardTo(port: number): void {
    this.target = port;
  }

  /** Drops every connection open now; how many. */
  cut(): number {
    const sockets = [...this.open];
    for (const socket of sockets) socket.destroy();
    return sockets.length;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
