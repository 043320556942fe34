// One HTTP call from the bench process (set-up, checks and the stream transfers), keep-alive.
import http from 'node:http';

// With a timeout of its own set, the agent also honours the server's `Keep-Alive: timeout=5` and drops
// an idle socket a second before the server would close it (Node 20 ignores that hint otherwise).
const agent = new http.Agent({ keepAlive: true, maxSockets: 8, timeout: 120_000 });

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Body bytes received. */
  bytes: number;
  ms: number;
}

export function call(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  options: { discardBody?: boolean } = {},
): Promise<Answer> {
  return send(port, method, path, headers, body, options).catch((error: Error & { reusedSocket?: boolean; code?: string }) => {
    // A kept-alive socket the server closed (its keep-alive timeout, 5 s) just as this request reused
    // it: sent again on a new socket, as Node's documentation advises for this race (EPIPE when a
    // large body was being written).
    if (error.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE'))
      return send(port, method, path, headers, body, options);
    throw error;
  });
}

function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  options: { discardBody?: boolean },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (!options.discardBody) chunks.push(chunk);
      });
      res.once('error', reject);
      res.once('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
          bytes,
          ms: performance.now() - started,
        }),
      );
    });
    req.once('error', (error: Error & { reusedSocket?: boolean }) => reject(Object.assign(error, { reusedSocket: req.reusedSocket })));
    // A stuck call fails the bench instead of hanging it.
    req.setTimeout(120_000, () => req.destroy(new Error(`${method} ${path} took over 120 s`)));
    req.end(body);
  });
}

/** Fails the bench early when a request it is about to measure does not answer as expected. */
export async function expectStatus(
  port: number,
  request: { method: string; path: string; headers: Record<string, string>; body?: string },
  status: number,
  what: string,
): Promise<void> {
  const answer = await call(port, request.method, request.path, request.headers, request.body);
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.body.slice(0, 300)}`);
}

/** Sends each request once, a few at a time (the agent's sockets), and fails on any answer but 200. */
export async function warmEach(
  port: number,
  requests: { method: string; path: string; headers: Record<string, string>; body?: string }[],
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < requests.length) await expectStatus(port, requests[next++] as (typeof requests)[number], 200, 'warm-up');
  };
  await Promise.all(Array.from({ length: agent.maxSockets }, worker));
}
