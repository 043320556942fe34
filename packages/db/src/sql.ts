// The one way the product talks to PostgreSQL at run time: pg statements through these helpers, every
// value a bound parameter. Prisma keeps the schema and the migrations only; its client compiles each
// query again and cost several times the query itself (docs/performance.md, "One query path").
import type pg from 'pg';
import { sendBatch, type Answer, type Statement } from './batch';

export type { Answer, Statement };

/** Runs one parameterised statement and returns its rows; `$1`… placeholders. */
export type Rows = <R>(text: string, values: unknown[]) => Promise<R[]>;

/** The statements a repository sends: on the pool, or on the one client of a transaction. */
export interface Sql {
  /** A fixed text as a named prepared statement: parsed and planned once per connection. */
  prepared: Rows;
  /** A text built per request (a search template's shape), sent unnamed and planned for its values. */
  plain: Rows;
  /** A fixed text's number of rows written (UPDATE, DELETE, INSERT … ON CONFLICT DO NOTHING). */
  count(text: string, values: unknown[]): Promise<number>;
  /**
   * Fixed texts sent together in one round trip (batch.ts), each answered in order: on the pool, as one
   * transaction of their own; in a transaction, as part of it. Rejects with the first error, after
   * which none of them took effect.
   */
  batch(statements: Statement[]): Promise<Answer[]>;
}

/** Told every statement before it is sent, its text and values; for tests that check what the product sends. */
export type StatementListener = (text: string, values: unknown[]) => void;

let listener: StatementListener | undefined;

/** Switches the statement hook on (a listener) or off (undefined). One per process: tests only. */
export function listenToStatements(next: StatementListener | undefined): void {
  listener = next;
}

const statementNames = new Map<string, string>();

/** A statement name per distinct text. Texts come from code only, so the map stays small. */
function nameOf(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `pds_${statementNames.size}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * A statement text that depends on its number of rows (an INSERT … VALUES of many), made once per
 * number: building and looking up a text of 20 rows on every write cost more than binding its values.
 */
export function textPerRows(textOf: (rows: number) => string): (rows: number) => string {
  const texts: string[] = [];
  return (rows) => (texts[rows] ??= textOf(rows));
}

/**
 * A page's `LIMIT` and, past the first page, its `OFFSET`, each bound as the next of `values`. PostgreSQL
 * prices a prepared statement's generic plan as if `OFFSET $n` skipped rows, so with one the custom plan
 * always looks cheaper and the statement is planned again on every execution: 85 of the 110 µs a
 * backend spent on a one-hit search by name (docs/performance.md). The first page, which nearly every
 * read asks for, gets a text without it, whose generic plan PostgreSQL keeps.
 */
export function pageClause(values: unknown[], page: { take: number; skip: number }): string {
  const limit = `LIMIT $${values.push(page.take)}`;
  return page.skip > 0 ? `${limit} OFFSET $${values.push(page.skip)}` : limit;
}

/** A fixed text and its values as a batch takes it: prepared under the text's name. */
export function statement(text: string, values: unknown[]): Statement {
  return { name: nameOf(text), text, values };
}

const BEGIN = statement('BEGIN', []);
const COMMIT = statement('COMMIT', []);

/** Statements on a pool: each on whichever connection is free, a batch as a transaction of its own. */
export function sqlOn(pool: pg.Pool): Sql {
  return {
    prepared: async <R>(text: string, values: unknown[]) => (await sendOnPool(pool, statement(text, values))).rows as R[],
    plain: async <R>(text: string, values: unknown[]) => {
      listener?.(text, values);
      return (await pool.query({ text, values })).rows as R[];
    },
    count: async (text, values) => (await sendOnPool(pool, statement(text, values))).rowCount,
    batch: (statements) => transaction(pool, (tx) => tx.finish(statements)),
  };
}

/**
 * One prepared statement on whichever connection is free, sent as a batch of one (batch.ts: its rows'
 * shape asked for once per connection, not on every execution). The connection goes back to the pool
 * as pg's `pool.query` gives it back, but kept after an error PostgreSQL answered (it is still in
 * step); one that failed otherwise is discarded.
 */
function sendOnPool(pool: pg.Pool, query: Statement): Promise<Answer> {
  listener?.(query.text, query.values);
  return new Promise((resolve, reject) => {
    pool.connect((failure, client, release) => {
      if (failure || !client) return reject(failure ?? new Error('No connection'));
      sendBatch(client, [query]).then(
        ([answer]) => {
          release();
          resolve(answer!);
        },
        (error: Error) => {
          release(postgresErrorCode(error) ? undefined : error);
          reject(error);
        },
      );
    });
  });
}

/**
 * Statements of one transaction on one client. BEGIN goes out with the first of them rather than in a
 * round trip of its own; `finish` sends COMMIT with the last batch. Methods, not closures made per
 * transaction (tsx, which `pnpm start` runs, names each closure it makes at run time).
 */
class TransactionSql implements Sql {
  begun = false;
  committed = false;

  constructor(private readonly client: pg.PoolClient) {}

  async prepared<R>(text: string, values: unknown[]): Promise<R[]> {
    return (await this.one(statement(text, values))).rows as R[];
  }

  async count(text: string, values: unknown[]): Promise<number> {
    return (await this.one(statement(text, values))).rowCount;
  }

  batch(statements: Statement[]): Promise<Answer[]> {
    return this.send(statements, false);
  }

  async plain<R>(text: string, values: unknown[]): Promise<R[]> {
    if (!this.begun) await this.send([], false);
    listener?.(text, values);
    return (await this.client.query({ text, values })).rows as R[];
  }

  /** The statements, then COMMIT, in one round trip. */
  async finish(statements: Statement[]): Promise<Answer[]> {
    const answers = await this.send([...statements, COMMIT], true);
    return answers.slice(0, statements.length);
  }

  private async one(query: Statement): Promise<Answer> {
    const [answer] = await this.send([query], false);
    return answer as Answer;
  }

  private async send(statements: Statement[], commit: boolean): Promise<Answer[]> {
    for (const { text, values } of statements) listener?.(text, values);
    const first = !this.begun;
    this.begun = true;
    if (commit) this.committed = true;
    const answers = await sendBatch(this.client, first ? [BEGIN, ...statements] : statements);
    return first ? answers.slice(1) : answers;
  }
}

/** A transaction's statements, with `finish`: its last statements sent with the COMMIT. */
export interface TransactionStatements extends Sql {
  finish(statements: Statement[]): Promise<Answer[]>;
}

/**
 * Runs `work` in one transaction on one pooled client: COMMIT when it resolves (unless `work` sent it
 * with its last statements through `finish`), ROLLBACK when it throws. The client always goes back to
 * the pool; one whose ROLLBACK failed (a broken connection) is discarded instead of being handed to the
 * next caller mid-transaction.
 */
export async function transaction<T>(pool: pg.Pool, work: (tx: TransactionStatements) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const tx = new TransactionSql(client);
  let broken: Error | undefined;
  try {
    const result = await work(tx);
    if (tx.begun && !tx.committed) await client.query('COMMIT');
    return result;
  } catch (error) {
    // Also after a failed `finish`: its COMMIT may not have run. Without a transaction open, ROLLBACK
    // only warns.
    if (tx.begun) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
    }
    throw error;
  } finally {
    client.release(broken);
  }
}

/** The SQLSTATE of a failed statement (`23505` unique violation, `57014` cancelled…), if it has one. */
export function postgresErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** PostgreSQL's code for a unique violation: an insert that found its key taken. */
export const UNIQUE_VIOLATION = '23505';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a `::uuid` parameter would parse; an id that is no uuid names nothing (and must not be a 500). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** A LIKE pattern matching `text` anywhere: its own wildcards escaped, so `50%_off` matches itself only (with ESCAPE '\\'). */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
