// Bundles: named queries over the data tables, evaluated in one parameterised SQL statement per
// property, bounded in rows (each property's limit) and in time (statement_timeout).
import type { GatewayDb } from './clients';
import type { LocatedRecord } from './data';
import { Prisma } from './generated/gateway/client';

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

const pathSql = (path: DataPath) => Prisma.sql`string_to_array(${path.join('.')}, '.')`;

/** PostgreSQL's codes for a stored value that is not a date (a bundle's date transformations read them). */
export const NOT_A_DATE_CODES = ['22007', '22008', '22009'];
/** PostgreSQL's code for a statement cancelled by statement_timeout. */
export const STATEMENT_TIMEOUT_CODE = '57014';

/** The PostgreSQL error code (SQLSTATE) behind a failed raw query through the driver adapter, if any. */
export function postgresErrorCode(error: unknown): string | undefined {
  const meta = (error as { meta?: { code?: unknown; driverAdapterError?: { cause?: { code?: unknown } } } } | undefined)?.meta;
  const code = meta?.driverAdapterError?.cause?.code ?? meta?.code;
  return typeof code === 'string' ? code : undefined;
}

function datePart(path: DataPath, extract: DatePartTransform): Prisma.Sql {
  const text = Prisma.sql`(r."data" #>> ${pathSql(path)})`;
  // Unix seconds within ±10^11 (about year 5000): to_timestamp fails beyond its range, so larger ones read as no date.
  const moment =
    extract.from === 'datetime'
      ? Prisma.sql`${text}::timestamptz`
      : Prisma.sql`CASE WHEN jsonb_typeof(r."data" #> ${pathSql(path)}) = 'number' AND abs(${text}::numeric) < 1e11 THEN to_timestamp(${text}::double precision) END`;
  return Prisma.sql`to_jsonb(date_part(${extract.part}, ${moment}))`;
}

function condition(filter: BundleFilter): Prisma.Sql {
  // Parenthesised: #> and @> share a precedence, and `x @> data #> path` would read as `(x @> data) #> path`.
  const field = filter.extract ? datePart(filter.path, filter.extract) : Prisma.sql`(r."data" #> ${pathSql(filter.path)})`;
  switch (filter.operator) {
    case 'contains':
      return Prisma.sql`${field} @> ${JSON.stringify(filter.value)}::jsonb`;
    case 'in':
      // An array value contains a matching scalar (jsonb containment's array-of-primitives rule).
      return Prisma.sql`${JSON.stringify(filter.value)}::jsonb @> ${field}`;
    case 'between':
      return Prisma.sql`(${field} >= ${JSON.stringify(filter.lower)}::jsonb AND ${field} <= ${JSON.stringify(filter.upper)}::jsonb)`;
    case 'find':
      return Prisma.sql`to_tsvector('simple', r."data" #>> ${pathSql(filter.path)}) @@ plainto_tsquery('simple', ${filter.search})`;
  }
}

function where(instanceId: string, selection: EndpointSelection): Prisma.Sql {
  const parts = [Prisma.sql`r."instanceId" = ${instanceId}::uuid`, Prisma.sql`r."namespace" = ${selection.namespace}`];
  if (selection.endpoint !== null) parts.push(Prisma.sql`r."endpoint" = ${selection.endpoint}`);
  parts.push(...selection.filters.map(condition));
  return Prisma.join(parts, ' AND ');
}

function dataSql(selection: EndpointSelection): Prisma.Sql {
  if (!selection.mapping) return Prisma.sql`r."data"`;
  const pairs = selection.mapping.flatMap(([name, path]) => [Prisma.sql`${name}::text`, Prisma.sql`r."data" #> ${pathSql(path)}`]);
  return Prisma.sql`jsonb_build_object(${Prisma.join(pairs)})`;
}

export class DataBundleRepository {
  constructor(private readonly db: GatewayDb) {}

  find(instanceId: string, name: string): Promise<StoredBundle | null> {
    return this.db.dataBundle.findUnique({
      where: { instanceId_name: { instanceId, name } },
      select: { name: true, query: true, createdAt: true },
    });
  }

  list(instanceId: string): Promise<StoredBundle[]> {
    return this.db.dataBundle.findMany({
      where: { instanceId },
      orderBy: { name: 'asc' },
      select: { name: true, query: true, createdAt: true },
    });
  }

  /** Creates or replaces the bundle. */
  async save(instanceId: string, name: string, query: unknown): Promise<StoredBundle> {
    const json = query as Prisma.InputJsonValue;
    return this.db.dataBundle.upsert({
      where: { instanceId_name: { instanceId, name } },
      create: { instanceId, name, query: json },
      update: { query: json },
      select: { name: true, query: true, createdAt: true },
    });
  }

  /** Each property's records: its endpoints' matching records, ordered, at most `limit`, with their links. */
  async evaluate(instanceId: string, properties: [string, PropertySelection][]): Promise<Record<string, BundleRecord[]>> {
    return this.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`SET LOCAL statement_timeout = ${BUNDLE_STATEMENT_TIMEOUT_MS}`);
      // Date parts in UTC, whatever the server's zone.
      await tx.$executeRawUnsafe(`SET LOCAL TIME ZONE 'UTC'`);
      const result: Record<string, BundleRecord[]> = {};
      for (const [name, property] of properties) result[name] = await this.property(tx, instanceId, property);
      return result;
    });
  }

  private async property(tx: Prisma.TransactionClient, instanceId: string, property: PropertySelection): Promise<BundleRecord[]> {
    const direction = property.descending ? Prisma.sql`DESC` : Prisma.sql`ASC`;
    const sortKey = property.orderBy ? Prisma.sql`r."data" #> ${pathSql(property.orderBy)}` : Prisma.sql`NULL::jsonb`;
    const order = Prisma.sql`"sortKey" ${direction} NULLS LAST, "seq" ${property.orderBy ? Prisma.sql`ASC` : direction}`;
    // Each branch is itself ordered and limited, so none reads more than `limit` rows through its index.
    const branches = property.endpoints.map(
      (selection, i) => Prisma.sql`(
        SELECT r."recordId", r."namespace", r."endpoint", ${dataSql(selection)} AS "data", r."seq", ${sortKey} AS "sortKey", ${i}::int AS "branch"
        FROM "DataRecord" r WHERE ${where(instanceId, selection)}
        ORDER BY ${order} LIMIT ${property.limit})`,
    );
    const rows = await tx.$queryRaw<(LocatedRecord & { branch: number })[]>`
      SELECT "recordId"::text AS "recordId", "namespace", "endpoint", "data", "branch"
      FROM (${Prisma.join(branches, ' UNION ALL ')}) b
      ORDER BY ${order} LIMIT ${property.limit}`;

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
    tx: Prisma.TransactionClient,
    instanceId: string,
    owners: string[],
    selections: EndpointSelection[],
  ): Promise<Map<string, LocatedRecord[]>> {
    const found = new Map<string, LocatedRecord[]>();
    if (owners.length === 0) return found;
    for (const selection of selections) {
      const rows = await tx.$queryRaw<(LocatedRecord & { of: string })[]>`
        SELECT "of", "recordId", "namespace", "endpoint", "data" FROM (
          SELECT l."recordId"::text AS "of", r."recordId"::text AS "recordId", r."namespace", r."endpoint", ${dataSql(selection)} AS "data",
                 row_number() OVER (PARTITION BY l."recordId" ORDER BY r."seq") AS n
          FROM "DataRecordLink" l JOIN "DataRecord" r ON r."instanceId" = l."instanceId" AND r."recordId" = l."linkedId"
          WHERE l."instanceId" = ${instanceId}::uuid AND l."recordId" = ANY(${owners}::uuid[]) AND ${where(instanceId, selection)}
        ) linked WHERE n <= ${MAX_LINKS_PER_RECORD}`;
      for (const { of, ...record } of rows) found.set(of, [...(found.get(of) ?? []), record]);
    }
    return found;
  }
}
