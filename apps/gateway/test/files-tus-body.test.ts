// A tus PATCH's body as the store takes it (files/tus/body.ts), over a real connection: a client that
// falls silent is taken as cut after the idle time, while a store slower than that idle time, holding
// the client back, ends nothing.
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { UploadBody } from '../src/files/tus/body';

const IDLE_MS = 300;

interface Taken {
  bytes: number;
  cut: boolean;
}

/** A server whose one request's body is read through UploadBody, `pause` ms after each piece (the store). */
async function server(pause: number): Promise<{ port: number; taken: Promise<Taken>; close(): void }> {
  let done!: (taken: Taken) => void;
  const taken = new Promise<Taken>((resolve) => (done = resolve));
  const read = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const body = new UploadBody(req, { limit: 1 << 30, idleMs: IDLE_MS, check: async () => undefined });
    let bytes = 0;
    for await (const chunk of body) {
      bytes += chunk.length;
      await sleep(pause);
    }
    done({ bytes, cut: body.cut });
    if (!res.destroyed) res.end();
  };
  const srv = http.createServer((req, res) => void read(req, res));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { port: (srv.address() as net.AddressInfo).port, taken, close: () => srv.close() };
}

describe('the body of a tus PATCH', () => {
  it('is taken whole however long the store takes with each piece, longer than the idle time', async () => {
    const { port, taken, close } = await server(IDLE_MS * 2);
    const bytes = Buffer.alloc(256 * 1024, 7);
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/`, { method: 'PATCH', body: bytes });
      expect(answer.status).toBe(200);
      expect(await taken).toEqual({ bytes: bytes.length, cut: false });
    } finally {
      close();
    }
  });

  it('is taken as cut, with the bytes that came, once the client is silent for the idle time', async () => {
    const { port, taken, close } = await server(0);
    const socket = net.connect(port, '127.0.0.1');
    try {
      socket.on('error', () => undefined);
      socket.write('PATCH / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n' + 'x'.repeat(400));
      expect(await taken).toEqual({ bytes: 400, cut: true });
    } finally {
      socket.destroy();
      close();
    }
  });
});
