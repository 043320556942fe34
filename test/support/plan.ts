// The plan PostgreSQL chooses for a statement (EXPLAIN … FORMAT JSON), on plain PostgreSQL and on a Citus
// coordinator alike. On Citus a statement of one instance is one task, run on the node that holds the
// instance's shards: its plan is that task's remote plan, whose table and index names carry the shard's
// number (`File_photos_idx_102008`), dropped here so one assertion reads both.
import type pg from 'pg';

export interface PlanNode {
  'Node Type': string;
  'Scan Direction'?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
  [detail: string]: unknown;
}

interface CitusScan {
  'Custom Plan Provider'?: string;
  'Distributed Query'?: { Job?: { Tasks?: { 'Remote Plan'?: { Plan: PlanNode }[][] }[] } };
}

type Statement = { text: string; values: unknown[] };

/** The root of the plan: `options` as EXPLAIN takes them, `FORMAT JSON` among them. */
export async function explain(pool: pg.Pool, statement: Statement, options = 'FORMAT JSON'): Promise<PlanNode> {
  const root = await rootOf(pool, `EXPLAIN (${options}) ${statement.text}`, statement.values);
  const citus = root as CitusScan;
  const tasks = citus['Distributed Query']?.Job?.Tasks ?? [];
  if (!citus['Custom Plan Provider']?.startsWith('Citus') || tasks.length !== 1) return root;
  const remote = tasks[0]?.['Remote Plan']?.[0]?.[0]?.Plan;
  // Citus cannot explain some statements on the worker with their parameters bound ("Could not get
  // remote plan"); with the same values written in, as PostgreSQL plans a statement it runs once, it can.
  if (remote) return withoutShardNumbers(remote);
  if (statement.values.length === 0) throw new Error(`Citus gave no worker plan: ${JSON.stringify(tasks[0]).slice(0, 300)}`);
  return explain(pool, { text: withValuesWritten(statement), values: [] }, options);
}

async function rootOf(pool: pg.Pool, text: string, values: unknown[]): Promise<PlanNode> {
  const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(text, values);
  return (rows[0]?.['QUERY PLAN'][0] as { Plan: PlanNode }).Plan;
}

/** The statement with each `$n` replaced by its value as a literal (arrays as PostgreSQL writes them). */
function withValuesWritten({ text, values }: Statement): string {
  const literal = (value: unknown): string => {
    if (value === null || value === undefined) return 'NULL';
    if (value instanceof Date) return escapeLiteral(value.toISOString());
    if (Array.isArray(value)) return escapeLiteral(`{${value.map((v) => `"${String(v).replace(/["\\]/g, '\\$&')}"`).join(',')}}`);
    return escapeLiteral(String(value));
  };
  return text.replace(/\$(\d+)/g, (_, n: string) => literal(values[Number(n) - 1]));
}

const escapeLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;

function withoutShardNumbers(node: PlanNode): PlanNode {
  const unsharded = (name: string | undefined) => name?.replace(/_\d+$/, '');
  return {
    ...node,
    ...(node['Relation Name'] ? { 'Relation Name': unsharded(node['Relation Name']) } : {}),
    ...(node['Index Name'] ? { 'Index Name': unsharded(node['Index Name']) } : {}),
    ...(node.Plans ? { Plans: node.Plans.map(withoutShardNumbers) } : {}),
  };
}

/** Every node of the plan, as "Node Type on index or relation" ("Index Scan Backward on …" when it runs backward). */
export async function planOf(pool: pg.Pool, statement: Statement): Promise<string[]> {
  const nodes: string[] = [];
  const walk = (node: PlanNode) => {
    const backward = node['Scan Direction'] === 'Backward' ? ' Backward' : '';
    nodes.push(`${node['Node Type']}${backward} on ${node['Index Name'] ?? node['Relation Name'] ?? '-'}`);
    node.Plans?.forEach(walk);
  };
  walk(await explain(pool, statement));
  return nodes;
}
