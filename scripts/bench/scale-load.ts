// The scale benchmark's data (issue 23): instances, their owners, files with their permissions and id
// counters, and data records, streamed by COPY (psql's, Debian's postgresql-client) into a migrated
// gateway database. Ids are derived from row numbers, so the load needs no memory per row. Keys come from
// a small pool of real RSA key pairs, each instance's private key sealed under the master key on its own,
// as sign-up seals it. The secondary indexes are dropped for the load and built again after it, and
// foreign-key triggers are off during it (session_replication_role): what a provider's bulk import does.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { generateRsaKeyPair, issueToken, openPrivateKey, sealPrivateKey, signingKeys, type SigningKeys } from '@pds/tokens';
import { ensureDebianCommand } from '../lib/debian';

export interface ScaleShape {
  instances: number;
  /** Files over all instances; `bigFiles` of them in instance 0, the rest spread evenly. */
  files: number;
  bigFiles: number;
  /** Records over all instances, spread evenly. */
  records: number;
}

export interface KeyPool {
  keys: { publicKeyPem: string; privateKeyPem: string; keyId: string; signing: SigningKeys }[];
  masterKey: Buffer;
}

export const TABLES = ['Instance', 'User', 'File', 'FilePermission', 'FileIdCounter', 'DataRecord'] as const;

/** A uuid of row `n` of a kind (one hex digit), unique across kinds. */
export function uuidOf(kind: string, n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  return `0000000${kind}-0000-4000-8000-${hex}`;
}

export const addressOf = (n: number, cluster: string) => `s${n}.${cluster}`;

export async function keyPool(size: number, masterKey: Buffer): Promise<KeyPool> {
  const keys = await Promise.all(
    Array.from({ length: size }, async () => {
      const pair = await generateRsaKeyPair();
      return { ...pair, signing: signingKeys(pair.keyId, pair.privateKeyPem) };
    }),
  );
  return { keys, masterKey };
}

export function keyOf(pool: KeyPool, n: number) {
  return pool.keys[n % pool.keys.length] as KeyPool['keys'][number];
}

/** An owner token of instance `n`, signed with its pool key. */
export function ownerToken(pool: KeyPool, n: number, cluster: string): string {
  const now = Math.floor(Date.now() / 1000);
  return issueToken(keyOf(pool, n).signing, { issuer: addressOf(n, cluster), subject: uuidOf('b', n), accessScope: 'owner' }, now).token;
}

/** How many files instance `n` holds. */
export function filesOf(shape: ScaleShape, n: number): number {
  if (n === 0) return Math.min(shape.bigFiles, shape.files);
  const rest = Math.max(0, shape.files - shape.bigFiles);
  const others = Math.max(1, shape.instances - 1);
  return Math.floor(rest / others) + (n - 1 < rest % others ? 1 : 0);
}

function recordsOf(shape: ScaleShape, n: number): number {
  return Math.floor(shape.records / shape.instances) + (n < shape.records % shape.instances ? 1 : 0);
}

/** A field of COPY's text format. */
const text = (value: string) => value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n');

/** The rows of one table for instances [from, to), as COPY text lines, in chunks of about 1 MB. */
function* rows(table: (typeof TABLES)[number], shape: ScaleShape, pool: KeyPool, cluster: string, from: number, to: number) {
  const now = new Date().toISOString();
  // One stand-in password hash of the product's format and length (scrypt, 16-byte salt, 32-byte hash).
  const hash = `scrypt$16384$8$1$${randomBytes(16).toString('base64')}$${randomBytes(32).toString('base64')}`;
  let chunk = '';
  let record = 0;
  for (let n = 0; n < from; n++) record += recordsOf(shape, n);
  for (let n = from; n < to; n++) {
    const instance = uuidOf('a', n);
    const owner = uuidOf('b', n);
    switch (table) {
      case 'Instance': {
        const key = keyOf(pool, n);
        const sealed = sealPrivateKey(key.privateKeyPem, pool.masterKey);
        chunk += `${instance}\t${addressOf(n, cluster)}\t${text(key.publicKeyPem)}\t${sealed}\t${key.keyId}\tregistered\t${now}\tactive\n`;
        break;
      }
      case 'User':
        chunk += `${owner}\t${instance}\ts${n}\ts${n}@example.com\tOwner ${n}\t${hash}\towner\t${now}\n`;
        break;
      default: {
        if (table === 'DataRecord') {
          for (let r = 0, count = recordsOf(shape, n); r < count; r++, record++)
            chunk += `${instance}\t${uuidOf('c', record)}\tbench\titems\t{"title": "note ${r}", "rank": ${r}}\t${now}\t${owner}\n`;
          break;
        }
        const base = Date.now();
        for (let f = 1, count = filesOf(shape, n); f <= count; f++) {
          const id = `f${f}.txt`;
          if (table === 'File') {
            const at = new Date(base - f * 1000).toISOString();
            chunk += `${instance}\t${id}\t${id}\tbench\t{t${f % 10}}\tfile number ${f}\tCompleted\t1024\t${owner}\t${at}\t${at}\t${now}\n`;
          } else if (table === 'FilePermission') chunk += `${instance}\t${id}\t${owner}\tt\n`;
          else chunk += `${instance}\tbenchf${f}\t.txt\t1\n`;
          if (chunk.length > 1_000_000) {
            yield chunk;
            chunk = '';
          }
        }
      }
    }
    if (chunk.length > 1_000_000) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

const COLUMNS: Record<(typeof TABLES)[number], string> = {
  Instance: '"id", "address", "publicKeyPem", "privateKeyEnc", "keyId", "dexState", "createdAt", "state"',
  User: '"id", "instanceId", "username", "email", "fullName", "passwordHash", "kind", "createdAt"',
  File: '"instanceId", "fileId", "name", "source", "tags", "title", "status", "size", "uploaderId", "dateCreated", "lastUpdated", "createdAt"',
  FilePermission: '"instanceId", "fileId", "userId", "contentReadable"',
  FileIdCounter: '"instanceId", "base", "ext", "last"',
  DataRecord: '"instanceId", "recordId", "namespace", "endpoint", "data", "createdAt", "userId"',
};

/** One COPY through psql, fed with backpressure; resolves when psql has committed it. */
async function copy(url: string, table: (typeof TABLES)[number], lines: Iterable<string>): Promise<void> {
  const psql = ensureDebianCommand('psql', 'postgresql-client');
  const child = spawn(
    psql,
    [
      url,
      '-v',
      'ON_ERROR_STOP=1',
      '-q',
      '-c',
      'SET session_replication_role = replica',
      '-c',
      `COPY "${table}" (${COLUMNS[table]}) FROM STDIN`,
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let errors = '';
  child.stderr.on('data', (data: Buffer) => (errors += data.toString()));
  const done = new Promise<void>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`COPY "${table}" failed: ${errors.slice(0, 500)}`)))),
  );
  for (const chunk of lines) {
    if (!child.stdin.write(chunk)) await new Promise((resolve) => child.stdin.once('drain', resolve));
  }
  child.stdin.end();
  await done;
}

/** Loads instances [from, to) of the shape into the database at `url`; the seconds each table took. */
export async function load(
  url: string,
  shape: ScaleShape,
  pool: KeyPool,
  cluster: string,
  range: { from: number; to: number },
  log: (message: string) => void,
): Promise<Record<string, number>> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const seconds: Record<string, number> = {};
  try {
    // Secondary indexes (not those of a key or a constraint) go for the load and come back after it.
    const { rows: indexes } = await db.query<{ name: string; definition: string }>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes i
        WHERE schemaname = 'public' AND tablename = ANY($1)
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
      [[...TABLES]],
    );
    for (const index of indexes) await db.query(`DROP INDEX "${index.name}"`);
    for (const table of TABLES) {
      const started = performance.now();
      await copy(url, table, rows(table, shape, pool, cluster, range.from, range.to));
      seconds[table] = (performance.now() - started) / 1000;
      log(`  ${table}: ${seconds[table].toFixed(1)} s`);
    }
    const started = performance.now();
    await db.query(`SET maintenance_work_mem = '256MB'`);
    for (const index of indexes) await db.query(index.definition);
    seconds.indexes = (performance.now() - started) / 1000;
    log(`  ${indexes.length} secondary indexes built again: ${seconds.indexes.toFixed(1)} s`);
    const vacuumed = performance.now();
    for (const table of TABLES) await db.query(`VACUUM ANALYZE "${table}"`);
    seconds.vacuum = (performance.now() - vacuumed) / 1000;
  } finally {
    await db.end();
  }
  return seconds;
}

/** Checks the first instance's sealed key opens under the master key (the load sealed what sign-up seals). */
export async function checkSealed(url: string, masterKey: Buffer): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows: found } = await db.query<{ sealed: string }>(`SELECT "privateKeyEnc" AS sealed FROM "Instance" LIMIT 1`);
    openPrivateKey(found[0]?.sealed ?? '', masterKey);
  } finally {
    await db.end();
  }
}
