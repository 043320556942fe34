// Helpers of the share-link suites: making a link as the owner, and using it as someone without an
// account, as a browser (HTML) or as a script (JSON), at the gateway under test.
import { createHash } from 'node:crypto';
import type { RequestListener } from 'node:http';
import request from 'supertest';
import type { TestGateway } from '../../../test/support/gateway';
import { call, type As } from './files-support';

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export interface MadeLink {
  id: string;
  url: string;
  /** The link's path at the instance: `/s/<token>`. */
  path: string;
  token: string;
}

/** POST /files/links as the owner; fails the test unless the link is made. */
export async function makeLink(gw: TestGateway, owner: As, body: Record<string, unknown>): Promise<MadeLink> {
  const res = await call(gw, 'post', '/links', owner, body);
  if (res.status !== 201) throw new Error(`making a link failed: ${res.status} ${JSON.stringify(res.body)}`);
  const url = new URL(res.body.url as string);
  return { id: res.body.id as string, url: res.body.url as string, path: url.pathname, token: url.pathname.split('/')[2] as string };
}

export interface VisitOptions {
  /** Ask as a browser does (HTML preferred); JSON otherwise. */
  browser?: boolean;
  cookie?: string;
  /** The client address, for a gateway that trusts loopback's X-Forwarded-For. */
  from?: string;
}

/** A GET at a link's address by someone without an account, on `app` (another gateway of the cluster, say). */
export function visit(app: RequestListener, address: string, path: string, options: VisitOptions = {}) {
  let req = request(app)
    .get(path)
    .set('Host', address)
    .set('Accept', options.browser ? 'text/html,application/xhtml+xml,*/*;q=0.8' : 'application/json');
  if (options.cookie) req = req.set('Cookie', options.cookie);
  if (options.from) req = req.set('X-Forwarded-For', options.from);
  return req;
}

/** Gives a link's password as its page's form does. */
export function givePassword(app: RequestListener, address: string, path: string, password: string, options: VisitOptions = {}) {
  let req = request(app)
    .post(path)
    .set('Host', address)
    .set('Accept', options.browser === false ? 'application/json' : 'text/html')
    .type('form');
  if (options.from) req = req.set('X-Forwarded-For', options.from);
  return req.send({ password });
}

/** The bytes of a response, whatever its type. */
export function bytesOf<T extends request.Test>(req: T): T {
  return req.buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  }) as T;
}

/** The `name=value` of a Set-Cookie answer, as a browser sends it back. */
export function cookieFrom(res: request.Response): string {
  const set = res.headers['set-cookie'] as unknown as string[] | undefined;
  const cookie = set?.[0]?.split(';')[0];
  if (!cookie) throw new Error('no cookie was set');
  return cookie;
}
