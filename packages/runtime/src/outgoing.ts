// Outgoing HTTP from the job processors. Instance addresses do not resolve in DNS everywhere (laptops,
// tests): CLUSTER_GATEWAYS maps a cluster domain to the base URL of its gateway, and the request carries
// the instance address as Host. fetch() forbids setting Host, hence node:http. Every call has a timeout
// and a cap on the response size, and keeps no pooled sockets.
import http from 'node:http';
import https from 'node:https';

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
  /** Overrides the Host header (the instance address when going through a mapped gateway). */
  host?: string;
}

export interface HttpResponse {
  status: number;
  body: string;
}

export class ResponseTooLarge extends Error {}

export function httpRequest(url: URL, request: HttpRequest): Promise<HttpResponse> {
  const client = url.protocol === 'https:' ? https : http;
  const headers: Record<string, string> = { ...request.headers };
  if (request.host) headers.Host = request.host;
  if (request.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(request.body));
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      // servername keeps TLS verification against the instance name when the Host is overridden.
      { method: request.method, headers, agent: false, timeout: request.timeoutMs, ...(request.host ? { servername: request.host } : {}) },
      (res) => {
        const declared = Number(res.headers['content-length'] ?? 0);
        if (declared > request.maxBytes) {
          req.destroy(new ResponseTooLarge(`response declares ${declared} bytes, over ${request.maxBytes}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > request.maxBytes) req.destroy(new ResponseTooLarge(`response is over ${request.maxBytes} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    // `timeout` only covers idle sockets; the overall deadline bounds slow trickles too.
    const deadline = setTimeout(() => req.destroy(new Error(`no complete answer within ${request.timeoutMs} ms`)), request.timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${request.timeoutMs} ms`)));
    req.on('error', reject);
    req.on('close', () => clearTimeout(deadline));
    req.end(request.body);
  });
}

/** Where to send a request for `path` on an instance: its cluster's mapped gateway, else https://<address>. */
export function instanceTarget(gateways: Record<string, string>, address: string, path: string): { url: URL; host?: string } {
  const labels = address.split('.');
  // The most specific mapped domain wins (a.b.example before b.example).
  for (let i = 1; i < labels.length; i++) {
    const base = gateways[labels.slice(i).join('.')];
    if (base) return { url: new URL(base + path), host: address };
  }
  return { url: new URL(`https://${address}${path}`) };
}

/** A request to an instance, routed as `instanceTarget` says. */
export function instanceRequest(
  gateways: Record<string, string>,
  address: string,
  path: string,
  request: HttpRequest,
): Promise<HttpResponse> {
  const target = instanceTarget(gateways, address, path);
  return httpRequest(target.url, { ...request, host: target.host });
}
