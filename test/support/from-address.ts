// Requests from a chosen source address: any of 127.0.0.0/8 is this machine's own, so a test can be as
// many clients as it likes, each one an address a server sees as the socket's peer (what a forwarded
// header cannot fake once no one writing it is believed).
import http from 'node:http';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body parsed as JSON when it is JSON, else its text. */
  body: unknown;
}

/** One request to 127.0.0.1:`port` on a new connection from `from` (e.g. 127.0.0.7). */
export function requestFrom(
  from: string,
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; json?: unknown },
): Promise<Answer> {
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        localAddress: from,
        agent: false,
        method: options.method ?? 'GET',
        path: options.path,
        headers: { ...options.headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: unknown = text;
          if (/json/.test(res.headers['content-type'] ?? '')) parsed = JSON.parse(text) as unknown;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
