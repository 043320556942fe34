// A small body's deadline over a real connection: with no deadline for a whole request on the gateway's
// listener (an upload may take hours), a JSON body trickled in slower than its deadline is answered 408
// and its connection closed, while one that arrives in time is read whole.
import http from 'node:http';
import net from 'node:net';
import { readText, toApiError } from '../src';

const DEADLINE_MS = 300;

async function server(): Promise<{ port: number; close(): void }> {
  const srv = http.createServer((req, res) => {
    readText(req, 1024, DEADLINE_MS).then(
      (text) => res.end(`read ${text.length}`),
      (error: unknown) => {
        const refusal = toApiError(error);
        res.writeHead(refusal.status, refusal.extra.headers).end(JSON.stringify({ error: refusal.kind }));
      },
    );
  });
  srv.requestTimeout = 0;
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { port: (srv.address() as net.AddressInfo).port, close: () => srv.close() };
}

/** Sends the request's head and then its body a byte every `everyMs`; what came back once the server closed. */
function trickle(port: number, body: string, everyMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let sent = 0;
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('close', () => {
      clearInterval(timer);
      resolve(answer);
    });
    socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    const timer = setInterval(() => {
      if (sent < body.length) socket.write(body[sent++] as string);
      // A whole answer that keeps the connection: done with it.
      else if (answer.includes('\r\n\r\n')) socket.end();
    }, everyMs);
  });
}

describe('a small body', () => {
  it('is answered 408, closing the connection, when it has not all come by its deadline', async () => {
    const { port, close } = await server();
    try {
      const answer = await trickle(port, '{"note":"a slow one"}', 50);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(answer).toContain('{"error":"Request Timeout"}');
    } finally {
      close();
    }
  });

  it('is read whole when it comes in time, however it is spread', async () => {
    const { port, close } = await server();
    try {
      const answer = await trickle(port, '{"a":1}', 20);
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toContain('read 7');
    } finally {
      close();
    }
  });
});
