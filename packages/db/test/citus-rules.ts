// What distributed PostgreSQL (Citus) asks of the gateway's schema and statements, as checks the tests
// run: on the catalog of a migrated database, and on the statement texts the product sends.
// `Instance`, `RetiredAddress` (erased instances' addresses, no instance id) and the operator's console
// tables (`Operator`, `ConsoleSession`, `AuditEntry`: the cluster's, not an instance's) are reference tables
// (copied to every node); every other table of the gateway database is a tenant table, distributed by "instanceId" (docs/deploy.md).
import pg from 'pg';
import { int, isNode, nodes, QueryTreeReader, walk, type PgNode, type PgValue } from './query-tree';

/** The reference tables: a copy on every node (prisma/citus/distribute.sql). The operators' tables belong to the cluster, not to an instance. */
const REFERENCE = new Set(['Instance', 'RetiredAddress', 'Operator', 'ConsoleSession', 'AuditEntry']);
/** Tables that are not distributed by "instanceId": the reference tables and Prisma's bookkeeping (local to the coordinator). */
const NOT_TENANT = new Set([...REFERENCE, '_prisma_migrations']);

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

// ---------------------------------------------------------------------------------------------------
// The statements. Each is read as PostgreSQL's analyzer makes it (query-tree.ts) and judged by the
// rules below, each after the Citus 13.2 planner function that refuses the shape (src/backend/
// distributed/planner/…). A statement Citus "router-plans" goes whole to the one node that holds the
// instance's shards; the others are split into steps through the coordinator, where more is refused.

type Volatility = 'i' | 's' | 'v';
const STRONGER: Record<Volatility, number> = { i: 0, s: 1, v: 2 };
const VOLATILITY_NAME: Record<Volatility, string> = { i: 'IMMUTABLE', s: 'STABLE', v: 'VOLATILE' };

/** What the rules look up in the catalog of the migrated database: tables, functions, operators, types. */
interface Catalog {
  relations: Map<number, { name: string; kind: 'tenant' | 'reference' | 'local'; instanceIdColumn: number }>;
  functions: Map<number, { name: string; volatility: Volatility }>;
  operators: Map<number, { name: string; code: number }>;
  /** A type's input and output functions: what a cast through text (CoerceViaIO) calls. */
  types: Map<number, { input: number; output: number }>;
}

async function readCatalog(client: pg.ClientBase): Promise<Catalog> {
  const tenant = new Set(await tenantTables(client));
  const relations = await client.query<{ oid: number; name: string; column: number | null }>(
    `SELECT c.oid::int AS "oid", c.relname AS "name",
       (SELECT a.attnum::int FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'instanceId') AS "column"
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')`,
  );
  const functions = await client.query<{ oid: number; name: string; volatility: Volatility }>(
    `SELECT oid::int AS "oid", proname AS "name", provolatile AS "volatility" FROM pg_proc`,
  );
  const operators = await client.query<{ oid: number; name: string; code: number }>(
    `SELECT oid::int AS "oid", oprname AS "name", oprcode::oid::int AS "code" FROM pg_operator`,
  );
  const types = await client.query<{ oid: number; input: number; output: number }>(
    `SELECT oid::int AS "oid", typinput::oid::int AS "input", typoutput::oid::int AS "output" FROM pg_type`,
  );
  const kind = (name: string) => (tenant.has(name) ? 'tenant' : REFERENCE.has(name) ? 'reference' : 'local');
  return {
    relations: new Map(relations.rows.map((r) => [r.oid, { name: r.name, kind: kind(r.name), instanceIdColumn: r.column ?? 0 }])),
    functions: new Map(functions.rows.map((f) => [f.oid, { name: f.name, volatility: f.volatility }])),
    operators: new Map(operators.rows.map((o) => [o.oid, { name: o.name, code: o.code }])),
    types: new Map(types.rows.map((t) => [t.oid, { input: t.input, output: t.output }])),
  };
}

/** Reads statements with PostgreSQL's analyzer and names what Citus would refuse in each. */
export class CitusStatementCheck {
  private constructor(
    private readonly reader: QueryTreeReader,
    private readonly catalog: Catalog,
  ) {}

  /** A check on a migrated gateway database (only its catalog is read; no statement is run). */
  static async connect(connectionString: string): Promise<CitusStatementCheck> {
    const reader = await QueryTreeReader.connect(connectionString);
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      return new CitusStatementCheck(reader, await readCatalog(client));
    } finally {
      await client.end();
    }
  }

  /** Why the statement could not run unchanged, or not on one shard, on Citus; empty when it could. */
  async problems(text: string): Promise<string[]> {
    const tree = await this.reader.read(text);
    if (tree instanceof Error) return [`PostgreSQL cannot read it: ${tree.message}`];
    if (int(tree.commandType) === COMMAND.utility) return [];
    const statement = readStatement(tree, this.catalog);
    const refused = [
      ...unfilteredTenantTables(statement),
      ...insertsWithoutInstanceId(statement),
      ...momentOrChanceInWrites(statement),
      ...functionsCitusCannotEvaluate(statement),
      ...modifyingCtesInSteps(statement),
      ...correlatedSubqueriesOverRecurringRows(statement),
      ...joinsNotOnInstanceId(statement),
    ];
    // A statement Citus refuses is said to be so; one it runs may still run on every shard.
    return refused.length > 0 ? refused : unpinnedInOneInstance(statement);
  }

  close(): Promise<void> {
    return this.reader.close();
  }
}

/** Query.commandType (nodes.h CmdType). */
const COMMAND = { select: 1, update: 2, insert: 3, delete: 4, utility: 6 } as const;
/** RangeTblEntry.rtekind (parsenodes.h RTEKind). */
const RTE = { relation: 0, subquery: 1, join: 2, function: 3, values: 5, cte: 6 } as const;

/** One Query of the statement: the statement itself, a CTE's body, a subquery in FROM or in an expression. */
interface Level {
  id: number;
  query: PgNode;
  /** The query it is written in: where a Var's `varlevelsup` counts up to. */
  parent: Level | undefined;
  /** The part Citus plans as one query: a CTE it does not inline is planned apart (a step of its own). */
  unit: number;
  /** The CTE's name, when the level is a CTE's body. */
  cte?: string;
}

/** A tenant table read or changed (INSERT targets aside) at one range table entry of one level. */
interface TenantUse {
  level: Level;
  label: string;
  /** The key of its "instanceId" column in the statement's equalities. */
  instanceId: string;
  /** Compared with `=` (or `= ANY`) to a parameter or a column somewhere. */
  compared: boolean;
}

interface Statement {
  catalog: Catalog;
  root: PgNode;
  levels: Level[];
  uses: TenantUse[];
  /** The CTEs that change rows (INSERT, UPDATE or DELETE), with the level of their body. */
  modifyingCtes: { name: string; level: Level }[];
  /** Equal values, through equalities in one level's WHERE and JOIN … ON (what the planner derives). */
  sameLevel: Equalities;
  /** …and also through a correlated subquery's equality of two tenant tables' "instanceId". */
  joined: Equalities;
}

/** Classes of equal values (a union-find over column and parameter keys). */
class Equalities {
  private readonly parent = new Map<string, string>();

  root(key: string): string {
    let root = key;
    while (this.parent.has(root)) root = this.parent.get(root)!;
    return root;
  }

  join(a: string, b: string): void {
    const [ra, rb] = [this.root(a), this.root(b)];
    if (ra !== rb) this.parent.set(ra, rb);
  }

  /** Whether the key is equal to a bound parameter ($n). */
  bound(key: string): boolean {
    const root = this.root(key);
    return [...this.parent.keys(), root].some((k) => k.startsWith('$') && this.root(k) === root);
  }

  copy(): Equalities {
    const copy = new Equalities();
    for (const [k, v] of this.parent) copy.parent.set(k, v);
    return copy;
  }
}

/** The levels, the tenant table uses and the equalities of a statement's query tree. */
function readStatement(root: PgNode, catalog: Catalog): Statement {
  const levels: Level[] = [];
  const levelOf = new Map<PgNode, Level>();
  let units = 0;
  const visit = (query: PgNode, parent: Level | undefined, unit: number, cte?: string) => {
    const level: Level = { id: levels.length, query, parent, unit, cte };
    levels.push(level);
    levelOf.set(query, level);
    for (const cte of nodes(query.cteList)) {
      visit(cte.ctequery as PgNode, level, inlined(cte) ? unit : ++units, cte.ctename as string);
    }
    for (const [field, value] of Object.entries(query)) {
      if (field === 'cteList') continue;
      walk(value, (node) => {
        if (node.type !== 'QUERY') return true;
        visit(node, level, unit);
        return false;
      });
    }
  };
  visit(root, undefined, 0);

  const cteOf = (level: Level, rte: PgNode) => {
    const holder = ancestor(level, int(rte.ctelevelsup));
    return nodes(holder?.query.cteList).find((cte) => cte.ctename === rte.ctename);
  };
  /** A column's key: a table's column itself, through subqueries and inlined CTEs to the column they select. */
  const columnKey = (level: Level, varno: number, attno: number): string => {
    const rte = nodes(level.query.rtable)[varno - 1];
    const opaque = `${level.id}.${varno}.${attno}`;
    if (!rte) return opaque;
    const selected = (query: PgNode) => {
      const entry = nodes(query.targetList).find((te) => int(te.resno) === attno);
      const expr = entry && stripRelabel(entry.expr);
      return isNode(expr, 'VAR') && int(expr.varlevelsup) === 0
        ? columnKey(levelOf.get(query)!, int(expr.varno), int(expr.varattno))
        : opaque;
    };
    const kind = int(rte.rtekind);
    if (kind === RTE.subquery && isNode(rte.subquery)) return selected(rte.subquery);
    if (kind === RTE.cte) {
      const cte = cteOf(level, rte);
      return cte && inlined(cte) ? selected(cte.ctequery as PgNode) : `cte:${cte?.ctename}.${attno}`;
    }
    if (kind === RTE.join) {
      const alias = stripRelabel((rte.joinaliasvars as PgValue[] | null)?.[attno - 1]);
      if (isNode(alias, 'VAR') && int(alias.varlevelsup) === 0) return columnKey(level, int(alias.varno), int(alias.varattno));
    }
    return opaque;
  };
  /** The key of a Var or a bound parameter; undefined for anything else. */
  const keyOf = (level: Level, value: PgValue | undefined): string | undefined => {
    const expr = stripRelabel(value);
    if (isNode(expr, 'PARAM') && int(expr.paramkind) === 0) return `$${int(expr.paramid)}`;
    if (!isNode(expr, 'VAR')) return undefined;
    const at = ancestor(level, int(expr.varlevelsup));
    return at && columnKey(at, int(expr.varno), int(expr.varattno));
  };

  const uses: TenantUse[] = [];
  for (const level of levels) {
    const query = level.query;
    const inserted = int(query.commandType) === COMMAND.insert ? int(query.resultRelation) : 0;
    const excluded = isNode(query.onConflict) ? int(query.onConflict.exclRelIndex) : 0;
    nodes(query.rtable).forEach((rte, i) => {
      const relation = catalog.relations.get(int(rte.relid));
      if (int(rte.rtekind) !== RTE.relation || relation?.kind !== 'tenant' || i + 1 === inserted || i + 1 === excluded) return;
      const alias = isNode(rte.alias) ? ` ${rte.alias.aliasname as string}` : '';
      uses.push({
        level,
        label: `"${relation.name}"${alias}`,
        instanceId: `${level.id}.${i + 1}.${relation.instanceIdColumn}`,
        compared: false,
      });
    });
  }

  const sameLevel = new Equalities();
  const correlated: [string, string][] = [];
  for (const level of levels) {
    // Compared anywhere, an optional filter too (`$1 IS NULL OR "instanceId" = $1`: a sweep's "all").
    walk(conditions(level.query), (node) => {
      const [a, b] = equalityOf(node, catalog)?.sides.map((side) => keyOf(level, side)) ?? [];
      for (const use of uses) if ((use.instanceId === a && b) || (use.instanceId === b && a)) use.compared = true;
    });
    for (const condition of conditions(level.query)) {
      const equality = equalityOf(condition, catalog);
      if (!equality) continue;
      const [a, b] = equality.sides.map((side) => keyOf(level, side));
      if (!a || !b || equality.any) continue;
      if (equality.sides.some((side) => isNode(stripRelabel(side), 'VAR') && int((stripRelabel(side) as PgNode).varlevelsup) > 0)) {
        correlated.push([a, b]);
      } else {
        sameLevel.join(a, b);
      }
    }
  }
  // Citus's equivalence of distribution columns (relation_restriction_equivalence.c) follows a
  // correlated subquery's parameter to the outer column, but only between distributed tables' columns.
  const joined = sameLevel.copy();
  const instanceIds = new Set(uses.map((use) => use.instanceId));
  for (const [a, b] of correlated) if (instanceIds.has(a) && instanceIds.has(b)) joined.join(a, b);

  const modifyingCtes = levels.flatMap((level) => {
    return level.cte !== undefined && int(level.query.commandType) !== COMMAND.select ? [{ name: level.cte, level }] : [];
  });
  return { catalog, root, levels, uses, modifyingCtes, sameLevel, joined };
}

/**
 * Whether Citus plans the CTE as part of the query that reads it (cte_inline.c
 * PostgreSQLCTEInlineCondition): a plain SELECT without volatile functions, not recursive, read once or
 * NOT MATERIALIZED. Any other CTE is a step of its own, its rows an intermediate result.
 */
function inlined(cte: PgNode): boolean {
  const body = cte.ctequery as PgNode;
  const materialized = int(cte.ctematerialized); // 0 default, 1 always, 2 never
  return (
    int(body.commandType) === COMMAND.select &&
    cte.cterecursive !== 'true' &&
    (materialized === 2 || (materialized === 0 && int(cte.cterefcount) === 1))
  );
}

function stripRelabel(value: PgValue | undefined): PgValue | undefined {
  return isNode(value, 'RELABELTYPE') ? stripRelabel(value.arg) : value;
}

/** The ANDed conditions of a query's WHERE and of its joins' ON clauses. */
function conditions(query: PgNode): PgNode[] {
  const found: PgNode[] = [];
  const split = (value: PgValue | undefined) => {
    if (isNode(value, 'BOOLEXPR') && value.boolop === 'and') nodes(value.args).forEach(split);
    else if (isNode(value)) found.push(value);
  };
  const jointree = query.jointree;
  if (!isNode(jointree)) return found;
  split(jointree.quals);
  walk(jointree.fromlist, (node) => {
    if (node.type === 'JOINEXPR') split(node.quals);
  });
  return found;
}

/** `a = b`, or `a = ANY(b)`, of a condition. */
function equalityOf(condition: PgNode, catalog: Catalog): { sides: PgValue[]; any: boolean } | undefined {
  const any = condition.type === 'SCALARARRAYOPEXPR' && condition.useOr === 'true';
  if (condition.type !== 'OPEXPR' && !any) return undefined;
  if (catalog.operators.get(int(condition.opno))?.name !== '=') return undefined;
  const sides = (condition.args as PgValue[] | null) ?? [];
  return sides.length === 2 ? { sides, any } : undefined;
}

/** Whether every tenant table the statement uses is pinned to one bound instance id (one shard group). */
function allPinned(statement: Statement): boolean {
  const roots = new Set(statement.uses.map((use) => statement.sameLevel.root(use.instanceId)));
  return roots.size === 0 || (roots.size === 1 && statement.sameLevel.bound(statement.uses[0]!.instanceId));
}

/**
 * Whether Citus plans the statement as one query on one node (its "router" planner). It does when every
 * tenant table is pinned to the same instance id and no CTE changes rows in a way it cannot route:
 * multi_router_planner.c ErrorIfQueryHasUnroutableModifyingCTE accepts only UPDATE and DELETE CTEs on a
 * distributed table, and CreateSingleTaskRouterSelectPlan only a query whose tables prune to one shard.
 */
function routerPlanned(statement: Statement): boolean {
  return statement.modifyingCtes.every((cte) => unroutableCte(statement, cte.level) === undefined) && allPinned(statement);
}

function unroutableCte(statement: Statement, level: Level): string | undefined {
  if (int(level.query.commandType) === COMMAND.insert) return 'an INSERT';
  const target = resultRelation(statement, level.query);
  if (target?.kind === 'reference') return `a change of the reference table "${target.name}"`;
  return undefined;
}

function resultRelation(statement: Statement, query: PgNode) {
  const rte = nodes(query.rtable)[int(query.resultRelation) - 1];
  return rte && statement.catalog.relations.get(int(rte.relid));
}

// ----- the rules --------------------------------------------------------------------------------------

/**
 * Every use of a tenant table is filtered on "instanceId" (`= $1`, `= ANY($1)`) or joined on it: Citus
 * otherwise reads every shard, and an instance's statement would see other instances' rows.
 */
function unfilteredTenantTables(statement: Statement): string[] {
  return statement.uses.filter((use) => !use.compared).map((use) => `${use.label} is not filtered or joined on "instanceId"`);
}

/** An INSERT into a tenant table writes "instanceId": Citus routes the row to a shard by it. */
function insertsWithoutInstanceId(statement: Statement): string[] {
  return statement.levels.flatMap(({ query }) => {
    const target = int(query.commandType) === COMMAND.insert ? resultRelation(statement, query) : undefined;
    if (target?.kind !== 'tenant' || nodes(query.targetList).some((te) => te.resname === 'instanceId')) return [];
    return [`INSERT INTO "${target.name}" does not write "instanceId"`];
  });
}

/** The time and the random a write needs are values the gateway binds (the project's rule: one clock, tests that can set it). */
const MOMENT_OR_CHANCE = new Set([
  'now',
  'statement_timestamp',
  'transaction_timestamp',
  'clock_timestamp',
  'timeofday',
  'random',
  'gen_random_uuid',
  'uuid_generate_v4',
]);
/** SQLValueFunction.op up to LOCALTIMESTAMP_N (primnodes.h SQLValueFunctionOp): CURRENT_DATE, CURRENT_TIMESTAMP… */
const LAST_MOMENT_KEYWORD = 8;

function momentOrChanceInWrites(statement: Statement): string[] {
  if (statement.levels.every(({ query }) => int(query.commandType) === COMMAND.select)) return [];
  const names = new Set<string>();
  walk(
    statement.root,
    (node) => {
      const name = node.type === 'FUNCEXPR' ? statement.catalog.functions.get(int(node.funcid))?.name : undefined;
      if (name && MOMENT_OR_CHANCE.has(name)) names.add(`${name}()`);
      if (node.type === 'SQLVALUEFUNCTION' && int(node.op) <= LAST_MOMENT_KEYWORD) names.add('CURRENT_TIMESTAMP/CURRENT_DATE/LOCALTIME');
    },
    true,
  );
  return [...names].map((name) => `writes with ${name}: pass the value as a parameter`);
}

/**
 * What Citus refuses in an INSERT, UPDATE or DELETE of a distributed or reference table, at the top or
 * in a CTE (multi_router_planner.c TargetlistAndFunctionsSupported and ErrorIfOnConflictNotSupported),
 * because it must run the same change on a shard's every copy, or on a reference table's copy on every
 * node, with the same result: in SET and WHERE, no VOLATILE function, no STABLE one given a column
 * (`"tokensValidAfter" + interval '1 second'`, an enum's `::text`; one given only parameters is
 * evaluated on the coordinator first), no CASE or COALESCE around a non-IMMUTABLE one; in RETURNING and
 * in ON CONFLICT's SET and WHERE, nothing non-IMMUTABLE at all; no subquery in INSERT … VALUES
 * (ModifyPartialQuerySupported). The same rules hold for the reference tables (Instance, RetiredAddress).
 */
function functionsCitusCannotEvaluate(statement: Statement): string[] {
  const { catalog } = statement;
  return statement.levels.flatMap(({ query }) => {
    const command = int(query.commandType);
    const target = command === COMMAND.select ? undefined : resultRelation(statement, query);
    if (!target || target.kind === 'local') return [];
    const what = `${command === COMMAND.update ? 'UPDATE' : command === COMMAND.insert ? 'INSERT INTO' : 'DELETE FROM'} "${target.name}"`;
    const problems: string[] = [];
    const changed = (place: string, expr: PgValue | undefined) => {
      const volatile = calls(expr, catalog, 'v', false);
      if (volatile) return problems.push(`${what}: ${place} calls VOLATILE ${volatile}`);
      const irreducible = stableOnColumn(expr, catalog);
      if (irreducible) problems.push(`${what}: ${place} ${irreducible}`);
    };
    if (command === COMMAND.update) {
      for (const te of nodes(query.targetList)) if (te.resjunk !== 'true') changed(`SET "${te.resname as string}"`, te.expr);
    }
    if (command === COMMAND.update || command === COMMAND.delete) changed('WHERE', isNode(query.jointree) ? query.jointree.quals : null);
    const returned = calls(query.returningList, catalog, 's', true);
    if (returned) problems.push(`${what}: RETURNING calls ${returned}: return columns only`);
    const onConflict = query.onConflict;
    if (isNode(onConflict)) {
      for (const te of nodes(onConflict.onConflictSet)) {
        const called = isNode(te.expr, 'VAR') ? undefined : calls(te.expr, catalog, 's', true);
        if (called) problems.push(`${what}: ON CONFLICT … SET "${te.resname as string}" calls ${called}`);
      }
      const where = calls([onConflict.onConflictWhere ?? null, onConflict.arbiterWhere ?? null], catalog, 's', true);
      if (where) problems.push(`${what}: ON CONFLICT … WHERE calls ${where}`);
    }
    const fromSelect = nodes(query.rtable).some((rte) => int(rte.rtekind) === RTE.subquery);
    if (command === COMMAND.insert && query.hasSubLinks === 'true' && !fromSelect) problems.push(`${what}: a subquery in VALUES`);
    return problems;
  });
}

/** The catalog functions a node itself calls (nodeFuncs.c check_functions_in_node), with a name for each. */
function functionsOf(node: PgNode, catalog: Catalog): { oid: number; named: string }[] {
  const fn = (oid: number, named?: string) => ({ oid, named: named ?? `${catalog.functions.get(oid)?.name ?? `function ${oid}`}()` });
  const operator = (opno: number) => {
    const op = catalog.operators.get(opno);
    return fn(op?.code ?? 0, op && `operator ${op.name} (${catalog.functions.get(op.code)?.name})`);
  };
  switch (node.type) {
    case 'FUNCEXPR':
      return [fn(int(node.funcid))];
    case 'AGGREF':
      return [fn(int(node.aggfnoid))];
    case 'WINDOWFUNC':
      return [fn(int(node.winfnoid))];
    case 'OPEXPR':
    case 'DISTINCTEXPR':
    case 'NULLIFEXPR':
    case 'SCALARARRAYOPEXPR':
      return [operator(int(node.opno))];
    case 'ROWCOMPAREEXPR':
      return ((node.opnos as string[] | null) ?? []).filter((o) => /^\d+$/.test(o)).map((o) => operator(Number(o)));
    case 'COERCEVIAIO': {
      // A cast through text: the output function of the type cast from, the input function of the one cast to.
      const output = catalog.types.get(typeOf(node.arg))?.output ?? 0;
      const input = catalog.types.get(int(node.resulttype))?.input ?? 0;
      return [fn(output), fn(input)].map((f) => ({ ...f, named: `cast ${f.named}` }));
    }
    default:
      return [];
  }
}

/** The strongest volatility of what a node itself calls; keywords like CURRENT_TIMESTAMP are STABLE, nextval VOLATILE. */
function volatilityOf(node: PgNode, catalog: Catalog): { volatility: Volatility; named: string } {
  if (node.type === 'SQLVALUEFUNCTION') return { volatility: 's', named: 'CURRENT_TIMESTAMP (or a like keyword)' };
  if (node.type === 'NEXTVALUEEXPR') return { volatility: 'v', named: 'nextval()' };
  let strongest: { volatility: Volatility; named: string } = { volatility: 'i', named: '' };
  for (const { oid, named } of functionsOf(node, catalog)) {
    // An unknown function (none expected) counts as VOLATILE rather than pass unseen.
    const volatility = catalog.functions.get(oid)?.volatility ?? 'v';
    if (STRONGER[volatility] > STRONGER[strongest.volatility]) strongest = { volatility, named };
  }
  return strongest;
}

/**
 * The first call at least as volatile as `at least` in an expression, described (`STABLE to_char()`),
 * or undefined. `intoQueries`: also inside its subqueries (contain_mutable_functions does, Citus's
 * VOLATILE check of SET and WHERE does not).
 */
function calls(value: PgValue | undefined, catalog: Catalog, atLeast: Volatility, intoQueries: boolean): string | undefined {
  let found: string | undefined;
  walk(
    value,
    (node) => {
      if (found) return false;
      const { volatility, named } = volatilityOf(node, catalog);
      if (STRONGER[volatility] >= STRONGER[atLeast]) found = `${VOLATILITY_NAME[volatility]} ${named}`;
    },
    intoQueries,
  );
  return found;
}

/**
 * What Citus's MasterIrreducibleExpression finds in a SET or WHERE expression: a STABLE call with a
 * column in its arguments, or a CASE or COALESCE around anything non-IMMUTABLE (evaluated lazily, so the
 * coordinator cannot evaluate it first). Subqueries are not entered, as expression_tree_walker does not.
 */
function stableOnColumn(value: PgValue | undefined, catalog: Catalog): string | undefined {
  let found: string | undefined;
  walk(value, (node) => {
    if (found || node.type === 'QUERY') return false;
    if (node.type === 'COALESCEEXPR' || node.type === 'CASEEXPR') {
      const inside = calls(node, catalog, 's', true);
      if (inside) found = `has ${node.type === 'CASEEXPR' ? 'CASE' : 'COALESCE'} around ${inside}`;
      return false;
    }
    const { volatility, named } = volatilityOf(node, catalog);
    if (volatility === 's' && hasColumn(node)) {
      found = `calls STABLE ${named} on a column`;
      return false;
    }
  });
  return found;
}

function hasColumn(node: PgNode): boolean {
  let column = false;
  walk(node, (inner) => {
    if (inner.type === 'VAR') column = true;
    return !column && inner.type !== 'QUERY';
  });
  return column;
}

/** The type of an expression's value (nodeFuncs.c exprType), for the casts through text. */
function typeOf(value: PgValue | undefined): number {
  if (!isNode(value)) return NaN;
  const field: Record<string, string> = {
    VAR: 'vartype',
    CONST: 'consttype',
    PARAM: 'paramtype',
    FUNCEXPR: 'funcresulttype',
    OPEXPR: 'opresulttype',
    DISTINCTEXPR: 'opresulttype',
    NULLIFEXPR: 'opresulttype',
    COERCEVIAIO: 'resulttype',
    RELABELTYPE: 'resulttype',
    ARRAYCOERCEEXPR: 'resulttype',
    COERCETODOMAIN: 'resulttype',
    FIELDSELECT: 'resulttype',
    COALESCEEXPR: 'coalescetype',
    CASEEXPR: 'casetype',
    MINMAXEXPR: 'minmaxtype',
    AGGREF: 'aggtype',
    WINDOWFUNC: 'wintype',
    ARRAYEXPR: 'array_typeid',
    ROWEXPR: 'row_typeid',
    SUBSCRIPTINGREF: 'refrestype',
    CASETESTEXPR: 'typeId',
    SQLVALUEFUNCTION: 'type',
  };
  const BOOLEAN = 16;
  if (['BOOLEXPR', 'NULLTEST', 'BOOLEANTEST', 'SCALARARRAYOPEXPR', 'ROWCOMPAREEXPR'].includes(value.type)) return BOOLEAN;
  if (value.type === 'COLLATEEXPR') return typeOf(value.arg);
  if (value.type === 'SUBLINK' && isNode(value.subselect)) return typeOf(nodes(value.subselect.targetList)[0]?.expr);
  const name = field[value.type];
  return name ? int(value[name]) : NaN;
}

/**
 * No data-modifying CTE that Citus must run in steps through the coordinator. It router-plans a
 * statement with such a CTE only when the CTE is an UPDATE or DELETE of a distributed table and every
 * tenant table of the statement is pinned to the same instance id (multi_router_planner.c
 * ErrorIfQueryHasUnroutableModifyingCTE and ModifyPartialQuerySupported: "only SELECT, UPDATE, or
 * DELETE common table expressions may be router planned"). Otherwise each CTE becomes a subplan whose
 * rows travel through the coordinator as an intermediate result (recursive_planning.c
 * RecursivelyPlanCTEs): a change and its event are then no longer one write on one shard. Write them
 * as two statements in one transaction.
 */
function modifyingCtesInSteps(statement: Statement): string[] {
  const pinned = allPinned(statement);
  const unpinned = statement.uses.filter((use) => !statement.sameLevel.bound(use.instanceId)).map((use) => use.label);
  return statement.modifyingCtes.flatMap(({ name, level }) => {
    const unroutable = unroutableCte(statement, level);
    if (unroutable)
      return [`the CTE "${name}" is ${unroutable}: Citus runs it as a step through the coordinator (write it as a statement of its own)`];
    if (pinned) return [];
    const which =
      unpinned.length > 0 ? `${unpinned.join(', ')} not pinned to the bound instance id` : 'tables pinned to different parameters';
    return [`the CTE "${name}" changes rows in a statement with ${which}: Citus runs it as a step through the coordinator`];
  });
}

/**
 * In a statement Citus does not route to one node, a query whose FROM holds no distributed table — only
 * CTE results, reference tables, functions, VALUES or nothing — may not hold a correlated subquery: its
 * rows are the same on every shard ("recurring"), and the subquery cannot be pushed down with them
 * (query_pushdown_planning.c DeferErrorIfFromClauseRecurs: "correlated subqueries are not supported when
 * the FROM clause contains a CTE or subquery"). That is the outer SELECT over a data-modifying CTE that
 * reads each row's permissions, and the operator's listing of instances with their owners.
 */
function correlatedSubqueriesOverRecurringRows(statement: Statement): string[] {
  if (routerPlanned(statement)) return [];
  return statement.levels.flatMap((level) => {
    const recurring = recurringFrom(statement, level);
    if (!recurring || !hasCorrelatedSubquery(level.query)) return [];
    const where = level.id === 0 ? 'the statement' : level.cte !== undefined ? `the CTE "${level.cte}"` : 'a subquery';
    return [`${where} has a correlated subquery while its FROM holds no tenant table, only ${recurring}; Citus cannot push it down`];
  });
}

/** What a level's FROM holds when it holds no distributed table (looking into its subqueries and inlined CTEs). */
function recurringFrom(statement: Statement, level: Level): string | undefined {
  const query = level.query;
  if (!isNode(query.jointree) || nodes(query.jointree.fromlist).length === 0) return 'nothing';
  const kinds = new Set<string>();
  const distributed = (q: PgNode, at: Level | undefined): boolean =>
    nodes(q.rtable).some((rte) => {
      const kind = int(rte.rtekind);
      if (kind === RTE.relation) {
        const relation = statement.catalog.relations.get(int(rte.relid));
        if (relation?.kind === 'tenant') return true;
        kinds.add(relation?.kind === 'reference' ? `the reference table "${relation.name}"` : 'a local table');
      }
      if (kind === RTE.subquery && isNode(rte.subquery)) return distributed(rte.subquery, undefined);
      if (kind === RTE.cte) {
        const holder = at && ancestor(at, int(rte.ctelevelsup));
        const cte = nodes(holder?.query.cteList).find((c) => c.ctename === rte.ctename);
        if (cte && inlined(cte)) return distributed(cte.ctequery as PgNode, undefined);
        kinds.add(`the CTE "${rte.ctename as string}"`);
      }
      if (kind === RTE.function) kinds.add('a function');
      if (kind === RTE.values) kinds.add('VALUES');
      return false;
    });
  return distributed(query, level) ? undefined : [...kinds].join(', ') || 'nothing';
}

function ancestor(level: Level, count: number): Level | undefined {
  let at: Level | undefined = level;
  for (let i = 0; i < count && at; i++) at = at.parent;
  return at;
}

/** Whether a query's expressions hold a subquery that reads a column of this query or of one around it. */
function hasCorrelatedSubquery(query: PgNode): boolean {
  let correlated = false;
  for (const [field, value] of Object.entries(query)) {
    if (field === 'cteList' || field === 'rtable') continue;
    walk(value, (node) => {
      if (node.type === 'SUBLINK' && isNode(node.subselect) && readsOutside(node.subselect)) correlated = true;
      return !correlated;
    });
  }
  return correlated;
}

/** Whether a query (with what it nests) has a Var of a query around it. */
function readsOutside(query: PgNode): boolean {
  const outside = (value: PgValue | undefined, depth: number): boolean => {
    if (Array.isArray(value)) return value.some((item) => outside(item, depth));
    if (!isNode(value)) return false;
    if (value.type === 'VAR') return int(value.varlevelsup) > depth;
    const inner = value.type === 'QUERY' && value !== query ? depth + 1 : depth;
    return Object.entries(value).some(([field, child]) => field !== 'type' && outside(child, inner));
  };
  return outside(query, 0);
}

/**
 * A statement of one instance (a tenant table pinned to the bound instance id) pins every tenant table it
 * uses, in its subqueries too. Citus prunes each table's shards by that table's own filters (shard_pruning.c
 * PruneShards); a subquery joined on the outer row's "instanceId" (`p."instanceId" = f."instanceId"`) keeps
 * all of its shards, and the statement runs as one task on every shard of the cluster, each reading the
 * instance's index there for nothing, where pinned it is one query on one node. Right answers, at the price
 * of the whole cluster per request: `EXPLAIN` on a coordinator shows "Task Count: 32" instead of 1.
 */
function unpinnedInOneInstance(statement: Statement): string[] {
  const pinned = (use: TenantUse) => statement.sameLevel.bound(use.instanceId);
  if (!statement.uses.some(pinned) || allPinned(statement)) return [];
  const unpinned = statement.uses.filter((use) => !pinned(use)).map((use) => use.label);
  return [`${unpinned.join(', ')} not pinned to the bound instance id in a statement of one instance: Citus sends it to every shard`];
}

/**
 * In a statement Citus does not route to one node, the tenant tables of each part it plans as one query
 * are joined on "instanceId", equal on both sides: directly, or through columns the planner equates in
 * one query level (relation_restriction_equivalence.c RestrictionEquivalenceForPartitionKeys; "complex
 * joins are only supported when all distributed tables are co-located and joined on their distribution
 * columns"). A join that goes through a reference table's column across levels (`o."instanceId" =
 * i."id"` in a subquery, with `i."id" = $1` outside) is not one: use the bound instance id.
 */
function joinsNotOnInstanceId(statement: Statement): string[] {
  if (routerPlanned(statement)) return [];
  const byUnit = new Map<number, TenantUse[]>();
  for (const use of statement.uses) byUnit.set(use.level.unit, [...(byUnit.get(use.level.unit) ?? []), use]);
  return [...byUnit.values()].flatMap((uses) => {
    const groups = new Map<string, string[]>();
    for (const use of uses) {
      const root = statement.joined.root(use.instanceId);
      groups.set(root, [...(groups.get(root) ?? []), use.label]);
    }
    if (groups.size < 2) return [];
    const parts = [...groups.values()].map((labels) => labels.join(' + '));
    return [`tenant tables not joined on "instanceId" (equal on both sides): ${parts.join(' | ')}; pin each to the bound instance id`];
  });
}
