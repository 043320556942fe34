// The bare baseline of `pnpm bench`, run as its own process: node:http + pg doing the essential work of
// each measured route and nothing else (no framework, no logging, no security headers):
//   GET  /publickey          hello
//   GET  /validate           cached token verify + the account read
//   GET  /file/:id           cached token verify + one primary-key read of the file
//   GET  /content/:id        the same, answered with a 303 to an HMAC-signed address
//   POST /search?take=N      cached token verify + the newest N files of the instance (bare SQL);
//        &name=X             only the file of that name
//   GET  /data/:ns/:endpoint cached token verify + the statements of the product's read of a table as an
//        ?take=N             app: the caller's grants, then the records (the same SQL texts)
//   POST /data/:ns/:endpoint the same grants, then one INSERT … VALUES of the body's record, or of each
//                            record of an array (ids made here, nothing else written, answered from memory)
//   PUT  /blob/:name         the body written to a file, one fsync at the end
//   GET  /blob/:name         the file read back
// A request whose Origin is BENCH_ORIGIN gets the headers the product sets for an allowed origin.
// Environment: PORT, DATABASE_URL, BENCH_INSTANCE_ID, BENCH_ISSUER, BENCH_PUBLIC_KEY (PEM), BENCH_BLOB_DIR,
// BENCH_ORIGIN.
import { createHmac, createPublicKey, randomBytes, randomUUID } from 'node:crypto';
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
const allowedOrigin = env('BENCH_ORIGIN');
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

async function search(take: number, name: string | null) {
  const newest = `SELECT * FROM "File" WHERE "instanceId" = $1 AND "status" <> 'Deleted'`;
  const order = `ORDER BY "lastUpdated" DESC LIMIT $2`;
  const { rows } = name
    ? await pool.query({ name: 'search-name', text: `${newest} AND "name" = $3 ${order}`, values: [instanceId, take, name] })
    : await pool.query({ name: 'search', text: `${newest} ${order}`, values: [instanceId, take] });
  return rows;
}

/** Whether the caller's grants (the product's statement) cover the table, as the product's data access decides. */
async function mayAccess(userId: string, access: 'read' | 'write', namespace: string, endpoint: string): Promise<boolean> {
  const { rows } = await pool.query<{ namespace: string; endpoint: string; access: string }>({
    name: 'grants',
    text: `SELECT "instanceId", "userId", "namespace", "endpoint", "access" FROM "DataGrant"
       WHERE "instanceId" = $1::uuid AND "userId" = $2::uuid ORDER BY "namespace", "endpoint", "access"`,
    values: [instanceId, userId],
  });
  return rows.some(
    (g) =>
      g.access === access &&
      g.namespace === namespace &&
      (g.endpoint === '*' || g.endpoint === endpoint || endpoint.startsWith(`${g.endpoint}/`)),
  );
}

const readRecords = (namespace: string, endpoint: string, take: number) =>
  pool.query<{ recordId: string; data: unknown }>({
    name: 'records',
    text: `SELECT "recordId"::text AS "recordId", "data" FROM "DataRecord"
       WHERE "instanceId" = $1::uuid AND "namespace" = $2 AND "endpoint" = $3
       ORDER BY "seq" ASC LIMIT $4`,
    values: [instanceId, namespace, endpoint, take],
  });

/** The rows in one statement, prepared once per number of rows. */
async function insertRecords(userId: string, namespace: string, endpoint: string, records: unknown[]) {
  const values: unknown[] = [instanceId, userId, namespace, endpoint];
  const saved = records.map((data) => ({ recordId: randomUUID(), data }));
  const rows = saved.map(({ recordId, data }) => {
    const json = JSON.stringify(data);
    values.push(recordId, json, Buffer.byteLength(json));
    return `($1::uuid, $${values.length - 2}::uuid, $3, $4, $${values.length - 1}::jsonb, $${values.length}::int, $2::uuid)`;
  });
  await pool.query({
    name: `insert-${records.length}`,
    text: `INSERT INTO "DataRecord" ("instanceId", "recordId", "namespace", "endpoint", "data", "bytes", "userId") VALUES ${rows.join(', ')}`,
    values,
  });
  return saved;
}

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString());
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  const [, first, second, third] = url.pathname.split('/');
  if (allowedOrigin && req.headers.origin === allowedOrigin) {
    res.setHeader('Access-Control-Allow-Origin', allowedOrigin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Access-Control-Expose-Headers', 'X-Auth-Token,X-Request-Id');
  }
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
  if (first === 'search') return json(res, 200, await search(Number(url.searchParams.get('take') ?? 1000), url.searchParams.get('name')));
  if (first === 'data' && second && third) {
    const write = req.method === 'POST';
    if (!(await mayAccess(who.sub, write ? 'write' : 'read', second, third))) return json(res, 403, { error: 'Forbidden' });
    const table = `${second}/${third}`;
    if (write) {
      const body = await readBody(req);
      const saved = (await insertRecords(who.sub, second, third, Array.isArray(body) ? body : [body])).map((r) => ({
        endpoint: table,
        ...r,
      }));
      return json(res, 201, Array.isArray(body) ? saved : saved[0]);
    }
    const { rows } = await readRecords(second, third, Number(url.searchParams.get('take') ?? 1000));
    return json(
      res,
      200,
      rows.map((r) => ({ endpoint: table, recordId: r.recordId, data: r.data })),
    );
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
