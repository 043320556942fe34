// A statement as PostgreSQL itself reads it: the query tree its parser and analyzer make, with every name
// resolved (a column is a Var: its range table entry and how many query levels up), every function,
// operator and cast resolved to the catalog entry it calls, and every CTE and subquery a nested Query.
// That is the tree Citus plans from, so the Citus rules (citus-rules.ts) read it rather than the text or
// a raw parse tree, which knows neither which table an unqualified column belongs to nor which of the
// many `+` or `||` operators a statement calls (`timestamptz + interval` is STABLE, `int + int` is not).
//
// How: the statement is sent as an unnamed prepared statement (Parse) with `debug_print_parse` on, and
// PostgreSQL sends the analyzed tree back as a LOG message (nodeToString's text); the Bind that follows
// gets one value too many, so nothing is executed. The parameters' types are inferred as they are when
// the product sends the statement.
import pg from 'pg';

/** A node of the tree: its type (`QUERY`, `VAR`, `OPEXPR`…) and its fields as nodeToString writes them. */
export interface PgNode {
  type: string;
  [field: string]: PgValue;
}
/** A field's value: a node, a list, a scalar (number, name, flag, all as text) or null (`<>`). */
export type PgValue = PgNode | PgValue[] | string | null;

/** Reads the analyzed query tree of statements from a database that has the schema they use. */
export class QueryTreeReader {
  private constructor(private readonly client: pg.Client) {}

  static async connect(connectionString: string): Promise<QueryTreeReader> {
    const client = new pg.Client({ connectionString });
    await client.connect();
    await client.query(`SET client_min_messages = log; SET debug_print_parse = on; SET debug_pretty_print = off`);
    return new QueryTreeReader(client);
  }

  /** The statement's query tree (one QUERY node), or the error PostgreSQL gives when it cannot analyze it. */
  async read(text: string): Promise<PgNode | Error> {
    const trees: string[] = [];
    const onNotice = (notice: { message?: string; detail?: string }) => {
      if (notice.message === 'parse tree:' && notice.detail) trees.push(notice.detail);
    };
    // More values than the statement has parameters ($n in a string literal only makes it more), so the
    // Bind fails after the Parse and the statement never runs.
    const parameters = Math.max(0, ...[...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));
    this.client.on('notice', onNotice);
    try {
      // queryMode (pg ≥ 8.11, not in its types): the extended protocol even for a statement without parameters.
      const query = { text, values: new Array(parameters + 1).fill(null), queryMode: 'extended' };
      await this.client.query(query as pg.QueryConfig);
      return new Error('the statement ran: it should have been refused at Bind');
    } catch (error) {
      const [tree] = trees;
      if (tree === undefined) return error as Error;
      return readNodeText(tree) as PgNode;
    } finally {
      this.client.off('notice', onNotice);
    }
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/**
 * Reads nodeToString's text (backend/nodes/outfuncs.c, read back by readfuncs.c's pg_strtok): `{TYPE
 * :field value …}` nodes, `(…)` lists, `<>` for null, tokens split at white space and at `(){}` unless
 * escaped with a backslash; a Const's datum follows its length as `[ bytes ]`.
 */
export function readNodeText(text: string): PgValue {
  const tokens = tokenize(text);
  let at = 0;
  const next = (): string => {
    const token = tokens[at++];
    if (token === undefined) throw new Error('the node text ended early');
    return token;
  };
  const value = (): PgValue => {
    const token = next();
    if (token === '{') {
      const node: PgNode = { type: next() };
      while (tokens[at] !== '}') {
        const field = next();
        if (!field.startsWith(':')) throw new Error(`expected a field name, found ${field}`);
        node[field.slice(1)] = value();
        if (tokens[at] === '[') while (next() !== ']'); // a Const's datum: its bytes, which no rule reads
      }
      at++;
      return node;
    }
    if (token === '(') {
      const list: PgValue[] = [];
      while (tokens[at] !== ')') list.push(value());
      at++;
      return list;
    }
    if (token === '<>') return null;
    return token.length >= 2 && token.startsWith('"') && token.endsWith('"') ? token.slice(1, -1) : token;
  };
  return value();
}

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let current: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\' && i + 1 < text.length) {
      current = (current ?? '') + text[++i];
    } else if (/\s/.test(char) || '(){}'.includes(char)) {
      if (current !== undefined) tokens.push(current);
      current = undefined;
      if (!/\s/.test(char)) tokens.push(char);
    } else {
      current = (current ?? '') + char;
    }
  }
  if (current !== undefined) tokens.push(current);
  return tokens;
}

/** Whether a value is a node (of this type, when given). */
export function isNode(value: PgValue | undefined, type?: string): value is PgNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (type === undefined || value.type === type);
}

/** A field that holds a list of nodes (`<>` is the empty list). */
export function nodes(value: PgValue | undefined): PgNode[] {
  return Array.isArray(value) ? value.filter((item): item is PgNode => isNode(item)) : [];
}

/** A field that holds a number. */
export function int(value: PgValue | undefined): number {
  return typeof value === 'string' ? Number(value) : NaN;
}

/**
 * Visits every node of an expression, depth first, the expression itself included. `visit` returns
 * false to skip a node's children. Sub-queries (a SubLink's `subselect`) are visited as QUERY nodes but
 * not entered unless `intoQueries`: what is inside is another query level.
 */
export function walk(value: PgValue | undefined, visit: (node: PgNode) => boolean | void, intoQueries = false): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, visit, intoQueries);
    return;
  }
  if (!isNode(value)) return;
  if (visit(value) === false) return;
  if (value.type === 'QUERY' && !intoQueries) return;
  for (const [field, child] of Object.entries(value)) if (field !== 'type') walk(child, visit, intoQueries);
}
