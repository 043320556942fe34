// Bundles: named queries over the data tables, evaluated in one parameterised SQL statement per
// property, bounded in rows (each property's limit) and in time (statement_timeout).
import type { GatewayDb } from './clients';
import type { LocatedRecord } from './data';
import { ReadRouting } from './replica';
import { sqlOn, transaction, type Sql } from './sql';

/** A path into a record's data, one segment per key (segments never contain "."). */
export type DataPath = string[];

/**
 * A part of a date taken from the field before the operator compares (the original's transformations):
 * `datetime` reads an ISO date string, `timestamp` Unix seconds. `part` is a PostgreSQL date_part field.
 */
export interface DatePartTransform {
  from: 'datetime' | 'timestamp';
  part: string;
}

/** The original's filter operators on one field. */
export type BundleFilter = { path: DataPath; extract?: DatePartTransform } & (
  | { operator: 'contains'; value: unknown }
  | { operator: 'in'; value: unknown }
  | { operator: 'between'; lower: unknown; upper: unknown }
  | { operator: 'find'; search: string }
);

export interface EndpointSelection {
  namespace: string;
  /** Null: every endpoint of the namespace. */
  endpoint: string | null;
  /** Output field → path into the data; absent: the data as stored. */
  mapping?: [string, DataPath][];
  filters: BundleFilter[];
  /** Linked records (POST /data-link) to attach to each record, selected the same way. */
  links: EndpointSelection[];
}

export interface PropertySelection {
  endpoints: EndpointSelection[];
  orderBy?: DataPath;
  descending: boolean;
  /** Records passed over before the first returned (a combinator's page); default 0. */
  skip?: number;
  limit: number;
}

export interface BundleRecord extends LocatedRecord {
  links?: LocatedRecord[];
}

export interface StoredBundle {
  name: string;
  /** The bundle structure as the owner sent it (validated). */
  query: unknown;
  createdAt: Date;
}

/** How long one property's query may run. */
export const BUNDLE_STATEMENT_TIMEOUT_MS = 5_000;
/** Linked records attached to one record, at most. */
export const MAX_LINKS_PER_RECORD = 100;

/** PostgreSQL's codes for a stored value that is not a date (a bundle's date transformations read them). */
export const NOT_A_DATE_CODES = ['22007', '22008', '22009'];
/** PostgreSQL's code for a statement cancelled by statement_timeout. */
export const STATEMENT_TIMEOUT_CODE = '57014';

/**
 * The values of one statement being built: `bind` appends a value and answers its placeholder, so the
 * text and its values cannot drift apart. A placeholder may appear more than once in the text; every
 * bound value must appear at least once (PostgreSQL cannot type a parameter it never sees).
 */
class Values {
  readonly list: unknown[] = [];
  constructor(instanceId: string) {
    this.list.push(instanceId);
  }
  /** `$1`, always the instance id. */
  readonly instance = '$1::uuid';
  bind(value: unknown): string {
    return `$${this.list.push(value)}`;
  }
}

const pathSql = (v: Values, path: DataPath) => `${v.bind(path)}::text[]`;

function datePart(v: Values, path: DataPath, extract: DatePartTransform): string {
  const at = pathSql(v, path);
  const text = `(r."data" #>> ${at})`;
  // Unix seconds within ±10^11 (about year 5000): to_timestamp fails beyond its range, so larger ones read as no date.
  const moment =
    extract.from === 'datetime'
      ? `${text}::timestamptz`
      : `CASE WHEN jsonb_typeof(r."data" #> ${at}) = 'number' AND abs(${text}::numeric) < 1e11 THEN to_timestamp(${text}::double precision) END`;
  return `to_jsonb(date_part(${v.bind(extract.part)}::text, ${moment}))`;
}

function condition(v: Values, filter: BundleFilter): string {
  if (filter.operator === 'find') {
    return `to_tsvector('simple', r."data" #>> ${pathSql(v, filter.path)}) @@ plainto_tsquery('simple', ${v.bind(filter.search)}::text)`;
  }
  // Parenthesised: #> and @> share a precedence, and `x @> data #> path` would read as `(x @> data) #> path`.
  const field = filter.extract ? datePart(v, filter.path, filter.extract) : `(r."data" #> ${pathSql(v, filter.path)})`;
  switch (filter.operator) {
    case 'contains':
      return `${field} @> ${v.bind(JSON.stringify(filter.value))}::jsonb`;
    case 'in':
      // An array value contains a matching scalar (jsonb containment's array-of-primitives rule).
      return `${v.bind(JSON.stringify(filter.value))}::jsonb @> ${field}`;
    case 'between':
      return `(${field} >= ${v.bind(JSON.stringify(filter.lower))}::jsonb AND ${field} <= ${v.bind(JSON.stringify(filter.upper))}::jsonb)`;
  }
}

function where(v: Values, selection: EndpointSelection): string {
  const parts = [`r."instanceId" = ${v.instance}`, `r."namespace" = ${v.bind(selection.namespace)}`];
  if (selection.endpoint !== null) parts.push(`r."endpoint" = ${v.bind(selection.endpoint)}`);
  parts.push(...selection.filters.map((filter) => condition(v, filter)));
  return parts.join(' AND ');
}

/** Output fields: a dotted name (`personal.firstName`) nests, as in the original's mappings. */
interface FieldTree {
  [name: string]: DataPath | FieldTree;
}

function fieldTree(mapping: [string, DataPath][]): FieldTree {
  const tree: FieldTree = {};
  for (const [name, path] of mapping) {
    const segments = name.split('.');
    // A name with an empty segment (`a..b`, `.a`) stays one flat field.
    const [leaf, ...parents] = (segments.includes('') ? [name] : segments).reverse() as [string, ...string[]];
    let node = tree;
    for (const parent of parents.reverse()) {
      const next = node[parent];
      node = node[parent] = next && !Array.isArray(next) ? next : {};
    }
    node[leaf] = path;
  }
  return tree;
}

/** PostgreSQL functions take at most 100 arguments: larger objects are built in parts and joined with ||. */
const PAIRS_PER_CALL = 50;

function objectSql(v: Values, tree: FieldTree): string {
  const pairs = Object.entries(tree).map(
    ([name, value]) => `${v.bind(name)}::text, ${Array.isArray(value) ? `r."data" #> ${pathSql(v, value)}` : objectSql(v, value)}`,
  );
  const parts: string[] = [];
  for (let i = 0; i < pairs.length; i += PAIRS_PER_CALL) parts.push(`jsonb_build_object(${pairs.slice(i, i + PAIRS_PER_CALL).join(', ')})`);
  return parts.length === 1 ? parts[0]! : `(${parts.join(' || ')})`;
}

function dataSql(v: Values, selection: EndpointSelection): string {
  return selection.mapping ? objectSql(v, fieldTree(selection.mapping)) : `r."data"`;
}

const BUNDLE_COLUMNS = `"name", "query", "createdAt"`;

export class DataBundleRepository {
  private readonly sql: Sql;

  /** `reads` sends a bundle's evaluation to a replica when there is one. */
  constructor(
    db: GatewayDb,
    private readonly reads = new ReadRouting(db),
  ) {
    this.sql = sqlOn(db.pool);
  }

  async find(instanceId: string, name: string): Promise<StoredBundle | null> {
    const [row] = await this.sql.prepared<StoredBundle>(
      `SELECT ${BUNDLE_COLUMNS} FROM "DataBundle" WHERE "instanceId" = $1::uuid AND "name" = $2`,
      [instanceId, name],
    );
    return row ?? null;
  }

  list(instanceId: string): Promise<StoredBundle[]> {
    return this.sql.prepared<StoredBundle>(`SELECT ${BUNDLE_COLUMNS} FROM "DataBundle" WHERE "instanceId" = $1::uuid ORDER BY "name"`, [
      instanceId,
    ]);
  }

  /** Creates or replaces the bundle (a replaced one keeps its createdAt). */
  async save(instanceId: string, name: string, query: unknown): Promise<StoredBundle> {
    const [row] = await this.sql.prepared<StoredBundle>(
      `INSERT INTO "DataBundle" ("instanceId", "name", "query", "createdAt") VALUES ($1::uuid, $2, $3::jsonb, $4::timestamptz)
       ON CONFLICT ("instanceId", "name") DO UPDATE SET "query" = EXCLUDED."query"
       RETURNING ${BUNDLE_COLUMNS}`,
      [instanceId, name, JSON.stringify(query), new Date()],
    );
    return row!;
  }

  /** Each property's records: its endpoints' matching records, ordered, at most `limit`, with their links. */
  async evaluate(instanceId: string, properties: [string, PropertySelection][]): Promise<Record<string, BundleRecord[]>> {
    return transaction(await this.reads.pool(instanceId), async (tx) => {
      await tx.plain(`SET LOCAL statement_timeout = ${BUNDLE_STATEMENT_TIMEOUT_MS}`, []);
      // Date parts in UTC, whatever the server's zone.
      await tx.plain(`SET LOCAL TIME ZONE 'UTC'`, []);
      const result: Record<string, BundleRecord[]> = {};
      for (const [name, property] of properties) result[name] = await this.property(tx, instanceId, property);
      return result;
    });
  }

  private async property(tx: Sql, instanceId: string, property: PropertySelection): Promise<BundleRecord[]> {
    const v = new Values(instanceId);
    const direction = property.descending ? 'DESC' : 'ASC';
    const sortKey = property.orderBy ? `r."data" #> ${pathSql(v, property.orderBy)}` : 'NULL::jsonb';
    const order = `"sortKey" ${direction} NULLS LAST, "seq" ${property.orderBy ? 'ASC' : direction}`;
    const skip = property.skip ?? 0;
    const limit = v.bind(property.limit);
    // Each branch is itself ordered and limited, so none reads more than skip + `limit` rows through its index.
    const branchLimit = skip ? v.bind(skip + property.limit) : limit;
    const branches = property.endpoints.map(
      (selection, i) => `(
        SELECT r."recordId", r."namespace", r."endpoint", ${dataSql(v, selection)} AS "data", r."seq", ${sortKey} AS "sortKey", ${i} AS "branch"
        FROM "DataRecord" r WHERE ${where(v, selection)}
        ORDER BY ${order} LIMIT ${branchLimit})`,
    );
    const rows = await tx.plain<LocatedRecord & { branch: number }>(
      `SELECT "recordId", "namespace", "endpoint", "data", "branch"
      FROM (${branches.join(' UNION ALL ')}) b
      ORDER BY ${order}${skip ? ` OFFSET ${v.bind(skip)}` : ''} LIMIT ${limit}`,
      v.list,
    );

    const records: BundleRecord[] = rows.map(({ branch: _branch, ...record }) => record);
    for (const [i, selection] of property.endpoints.entries()) {
      if (selection.links.length === 0) continue;
      const owners = rows.filter((row) => row.branch === i).map((row) => row.recordId);
      const links = await this.links(tx, instanceId, owners, selection.links);
      for (const record of records) if (owners.includes(record.recordId)) record.links = links.get(record.recordId) ?? [];
    }
    return records;
  }

  private async links(
    tx: Sql,
    instanceId: string,
    owners: string[],
    selections: EndpointSelection[],
  ): Promise<Map<string, LocatedRecord[]>> {
    const found = new Map<string, LocatedRecord[]>();
    if (owners.length === 0) return found;
    for (const selection of selections) {
      const v = new Values(instanceId);
      const rows = await tx.plain<LocatedRecord & { of: string }>(
        `SELECT "of", "recordId", "namespace", "endpoint", "data" FROM (
          SELECT l."recordId" AS "of", r."recordId", r."namespace", r."endpoint", ${dataSql(v, selection)} AS "data",
                 row_number() OVER (PARTITION BY l."recordId" ORDER BY r."seq") AS n
          FROM "DataRecordLink" l JOIN "DataRecord" r ON r."instanceId" = l."instanceId" AND r."recordId" = l."linkedId"
          WHERE l."instanceId" = ${v.instance} AND l."recordId" = ANY(${v.bind(owners)}::uuid[]) AND ${where(v, selection)}
        ) linked WHERE n <= ${MAX_LINKS_PER_RECORD}`,
        v.list,
      );
      for (const { of, ...record } of rows) found.set(of, [...(found.get(of) ?? []), record]);
    }
    return found;
  }
}
