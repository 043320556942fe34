// The bare baseline of `pnpm bench`, run as its own process: node:http + pg doing the essential work of
// each measured route and nothing else (no framework, no logging, no security headers):
//   GET  /publickey          hello
//   GET  /validate           cached token verify + the account read
//   GET  /file/:id           cached token verify + one primary-key read of the file
//   GET  /content/:id        the same, answered with a 303 to an HMAC-signed address
//   POST /search?take=N      cached token verify + the newest N files of the instance (bare SQL)
//   PUT  /blob/:name         the body written to a file, one fsync at the end
//   GET  /blob/:name         the file read back
// Environment: PORT, DATABASE_URL, BENCH_INSTANCE_ID, BENCH_ISSUER, BENCH_PUBLIC_KEY (PEM), BENCH_BLOB_DIR.
import { createHmac, createPublicKey, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import jwt from 'jsonwebtoken';
import pg from 'pg';

const env = (name: string) => process.env[name] ?? '';
const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 10 });
const instanceId = env('BENCH_INSTANCE_ID');
const issuer = env('BENCH_ISSUER');
const publicKey = createPublicKey(env('BENCH_PUBLIC_KEY'));
const blobDir = env('BENCH_BLOB_DIR');
const signingKey = randomBytes(32);
const verified = new Map<string, { sub: string }>();

function caller(req: http.IncomingMessage): { sub: string } | undefined {
  const token = req.headers['x-auth-token'];
  if (typeof token !== 'string') return undefined;
  let claims = verified.get(token);
  if (!claims) {
    claims = jwt.verify(token, publicKey, { algorithms: ['RS256'], issuer }) as { sub: string };
    verified.set(token, claims);
  }
  return claims;
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

const readFile = (fileId: string) =>
  pool.query({ name: 'file', text: 'SELECT * FROM "File" WHERE "instanceId" = $1 AND "fileId" = $2', values: [instanceId, fileId] });

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  const [, first, second] = url.pathname.split('/');
  if (first === 'publickey') {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('hello');
    return;
  }
  if (first === 'blob' && second) {
    const file = path.join(blobDir, path.basename(second));
    if (req.method === 'PUT') {
      // flush: fsync once, when the file closes.
      await pipeline(req, createWriteStream(file, { flush: true }));
      res.writeHead(200).end();
    } else {
      await pipeline(createReadStream(file), res);
    }
    return;
  }
  const who = caller(req);
  if (!who) return json(res, 401, { error: 'Not Authenticated' });
  if (first === 'validate') {
    const { rows } = await pool.query({
      name: 'user',
      text: 'SELECT * FROM "User" WHERE "instanceId" = $1 AND "id" = $2',
      values: [instanceId, who.sub],
    });
    if (rows.length === 0) return json(res, 401, { error: 'Not Authenticated' });
    return json(res, 200, { message: 'Authenticated' });
  }
  if (first === 'file' && second) {
    const { rows } = await readFile(second);
    return rows[0] ? json(res, 200, rows[0]) : json(res, 404, { error: 'Not Found' });
  }
  if (first === 'content' && second) {
    const { rows } = await readFile(second);
    if (!rows[0]) return json(res, 404, { error: 'Not Found' });
    const signature = createHmac('sha256', signingKey).update(`${instanceId}/${second}`).digest('base64url');
    res.writeHead(303, { Location: `http://blobs.example/${second}?s=${signature}` }).end();
    return;
  }
  if (first === 'search') {
    const take = Number(url.searchParams.get('take') ?? 1000);
    const { rows } = await pool.query({
      name: `search`,
      text: `SELECT * FROM "File" WHERE "instanceId" = $1 AND "status" <> 'Deleted' ORDER BY "lastUpdated" DESC LIMIT $2`,
      values: [instanceId, take],
    });
    return json(res, 200, rows);
  }
  json(res, 404, { error: 'Not Found' });
}

http
  .createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) json(res, 500, { error: 'Internal Server Error' });
      else res.destroy();
    });
  })
  .listen(Number(env('PORT')), '127.0.0.1', () => console.log('baseline listening'));

// Exit normally on SIGTERM (the bench's stop), so that BENCH_CPU_PROF writes this process's profile too.
process.once('SIGTERM', () => process.exit(0));
