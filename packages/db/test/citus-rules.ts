// What distributed PostgreSQL (Citus) asks of the gateway's schema and statements, as checks the tests
// run: on the catalog of a migrated database, and on the statement texts the product sends.
// `Instance` and `RetiredAddress` (erased instances' addresses, no instance id) are reference tables
// (copied to every node); every other table of the gateway database is a tenant table, distributed by "instanceId" (docs/deploy.md).
import type pg from 'pg';

/** Tables that are not distributed by "instanceId". */
const NOT_TENANT = new Set(['Instance', 'RetiredAddress', '_prisma_migrations']);

/** The tenant tables of a database: every table of the public schema but the reference table and bookkeeping. */
export async function tenantTables(client: pg.ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
  );
  return rows.map((r) => r.name).filter((name) => !NOT_TENANT.has(name));
}

const KIND: Record<string, string> = { p: 'primary key', u: 'unique constraint', f: 'foreign key' };
/** pg_constraint.confupdtype: a = NO ACTION, r = RESTRICT; c, n, d change the referencing rows. */
const UPDATE_ACTION: Record<string, string> = { c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };

/**
 * What keeps the database from being distributed: each primary key, unique constraint, unique index and
 * foreign key of a tenant table that lacks "instanceId", and each foreign key that changes rows on
 * update. Empty when the schema is ready.
 */
export async function catalogProblems(client: pg.ClientBase): Promise<string[]> {
  const tenant = new Set(await tenantTables(client));
  const constraints = await client.query<{ table: string; name: string; kind: string; onUpdate: string; columns: string[] }>(
    `SELECT c.relname AS "table", con.conname AS "name", con.contype AS "kind", con.confupdtype AS "onUpdate",
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY AS k(n, i) JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i)::text[] AS "columns"
     FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace ns ON ns.oid = c.relnamespace
     WHERE ns.nspname = 'public' AND con.contype IN ('p', 'u', 'f')`,
  );
  // Prisma writes @@unique as a unique index, which has no pg_constraint row.
  const uniqueIndexes = await client.query<{ table: string; name: string; columns: string[] }>(
    `SELECT t.relname AS "table", i.relname AS "name",
       ARRAY(SELECT a.attname FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(n, i) JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n ORDER BY k.i)::text[] AS "columns"
     FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_namespace ns ON ns.oid = t.relnamespace
     WHERE ns.nspname = 'public' AND x.indisunique
       AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = x.indexrelid AND con.contype IN ('p', 'u'))`,
  );
  const problems: string[] = [];
  for (const c of constraints.rows.filter((row) => tenant.has(row.table))) {
    const described = `${KIND[c.kind]} ${c.name} of ${c.table} (${c.columns.join(', ')})`;
    if (!c.columns.includes('instanceId')) problems.push(`${described} lacks instanceId`);
    if (c.kind === 'f' && UPDATE_ACTION[c.onUpdate]) problems.push(`${described} is ON UPDATE ${UPDATE_ACTION[c.onUpdate]}`);
  }
  for (const index of uniqueIndexes.rows.filter((row) => tenant.has(row.table))) {
    if (!index.columns.includes('instanceId'))
      problems.push(`unique index ${index.name} of ${index.table} (${index.columns.join(', ')}) lacks instanceId`);
  }
  return problems.sort();
}

/** Words after a table name that are not its alias. */
const KEYWORDS = new Set([
  'as',
  'where',
  'set',
  'on',
  'join',
  'left',
  'right',
  'inner',
  'cross',
  'order',
  'group',
  'limit',
  'offset',
  'values',
  'returning',
  'using',
  'select',
  'for',
  'union',
  'default',
]);

/** Functions whose value depends on the moment or on chance: never written by a statement's own text. */
const MOMENT_OR_CHANCE =
  /\b(now|current_timestamp|current_date|current_time|localtimestamp|localtime|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday|random|gen_random_uuid|uuid_generate_v4)\b/i;

/** One RETURNING item that is a column and nothing else: `*`, `"c"`, `t."c"`, `t.c`, `t.*`, optionally `AS "name"`. */
const PLAIN_COLUMN = /^(?:(?:"[^"]+"|[a-z_]\w*)\.)?(?:\*|"[^"]+"|[a-z_]\w*)(?:\s+AS\s+"[^"]+")?$/i;

/** Why a statement could not run unchanged on tables distributed by "instanceId"; empty when it could. */
export function statementProblems(text: string, tenant: readonly string[]): string[] {
  const sql = text.replace(/'(?:[^']|'')*'/g, "''");
  const problems: string[] = [];
  const touched = tenant.filter((table) => sql.includes(`"${table}"`));
  for (const table of touched) {
    for (const problem of tableProblems(sql, table)) problems.push(problem);
  }
  for (const clause of returningClauses(sql)) {
    const items = splitTopLevel(clause);
    const computed = items.filter((item) => !PLAIN_COLUMN.test(item.trim()));
    // A column cannot call a function; anything else might (an enum cast, now(), to_char…).
    if (computed.length > 0) problems.push(`RETURNING computes ${computed.map((item) => item.trim()).join(', ')}`);
  }
  const writes = /^\s*(WITH\b[\s\S]*\b(INSERT|UPDATE|DELETE)\b|INSERT|UPDATE|DELETE)/i.test(sql);
  const moment = sql.match(MOMENT_OR_CHANCE);
  if (writes && touched.length > 0 && moment) problems.push(`writes with ${moment[0]}: pass the value as a parameter`);
  return problems;
}

/** Each place `table` is read or written must be filtered or joined on its "instanceId". */
function tableProblems(sql: string, table: string): string[] {
  const problems: string[] = [];
  // The table as a relation (not `"T"."column"`), with what follows it.
  const uses = new RegExp(`(INSERT\\s+INTO\\s+)?"${table}"(?!\\.)(?:\\s+(?:AS\\s+)?([a-z_]\\w*))?`, 'gi');
  for (const use of sql.matchAll(uses)) {
    const [, insert, word] = use;
    if (insert) {
      const columns = sql.slice((use.index ?? 0) + use[0].length).match(/^\s*\(([^)]*)\)/);
      if (!columns?.[1]?.includes('"instanceId"')) problems.push(`INSERT INTO "${table}" does not write instanceId`);
      continue;
    }
    const alias = word && !KEYWORDS.has(word.toLowerCase()) ? word : undefined;
    const column = alias ? `\\b${alias}\\."instanceId"` : `(?<![.\\w])"instanceId"`;
    if (!new RegExp(`${column}\\s*=|=\\s*${column}`).test(sql)) {
      problems.push(`"${table}"${alias ? ` ${alias}` : ''} is not filtered or joined on instanceId`);
    }
  }
  return problems;
}

/** The text of each RETURNING clause: up to the end of the statement or of the CTE that holds it. */
function returningClauses(sql: string): string[] {
  const clauses: string[] = [];
  for (const match of sql.matchAll(/\bRETURNING\b/gi)) {
    const start = (match.index ?? 0) + match[0].length;
    let depth = 0;
    let end = start;
    for (; end < sql.length; end++) {
      if (sql[end] === '(') depth++;
      if (sql[end] === ')' && --depth < 0) break;
    }
    clauses.push(sql.slice(start, end));
  }
  return clauses;
}

/** The comma-separated items of a list, commas inside parentheses kept. */
function splitTopLevel(list: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of list) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      items.push(current);
      current = '';
    } else current += char;
  }
  items.push(current);
  return items;
}
