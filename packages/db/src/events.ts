// Reading the outbox (event stream, webhooks), the reads the owner's activity log keeps, and the log's
// queries and retention. The outbox itself is written by the change statements (outbox.ts).
import type { GatewayDb } from './clients';
import type { ActorKind } from './outbox';
import { ReadRouting } from './replica';
import { sqlOn, statement, transaction, type Sql } from './sql';

export interface StoredEvent {
  seq: number;
  type: string;
  actorKind: ActorKind;
  actorId: string | null;
  object: Record<string, unknown>;
  at: Date;
}

/** A read the owner's activity log keeps (file content served, records read, log-ins …). */
export interface ReadEntry {
  instanceId: string;
  type: string;
  actorKind: ActorKind;
  actorId: string | null;
  object: Record<string, unknown>;
  address: string | null;
  at: Date;
  /** How many identical reads this entry stands for (1 for a change). */
  times: number;
}

export interface ActivityEntry extends Omit<ReadEntry, 'instanceId'> {
  /** `change` from the outbox, `read` from the reads kept. */
  kind: 'change' | 'read';
}

/** The names of what activity entries mention, by id. */
export interface ActivityNames {
  accounts: Map<string, string>;
  files: Map<string, string>;
  apps: Map<string, string>;
}

export interface ActivityQuery {
  since?: Date;
  until?: Date;
  actorId?: string;
  /** An exact type, or a prefix ending in "." (`record.` for every record event). */
  type?: string;
  take: number;
}

const EVENT_COLUMNS = `"seq"::int8::text AS "seq", "count", "type", "actorKind", "actorId", "object", "at"`;

/** An outbox row: one event, or (`count` > 1) the events of one change of one type, `object` the list of theirs. */
type EventRow = Omit<StoredEvent, 'seq'> & { seq: string; count: number };

/** The events of an outbox row, each with its own object and the row's other fields, in the order written. */
export function eventsIn<R extends { count: number; object: unknown }>({
  count,
  object,
  ...row
}: R): (Omit<R, 'count' | 'object'> & { object: Record<string, unknown> })[] {
  const objects = (count === 1 ? [object] : object) as Record<string, unknown>[];
  // Object.assign, not `{ ...row, object }`: a property after a spread is V8's slow path, per event.
  return objects.map((one) => Object.assign({}, row, { object: one }));
}

/** The row's events, each with its number: the row's `seq` is its last event's. */
function eventsOf(row: EventRow): StoredEvent[] {
  const first = Number(row.seq) - row.count + 1;
  return eventsIn(row).map((event, i) => Object.assign(event, { seq: first + i }));
}

export class EventRepository {
  private readonly sql: Sql;
  private readonly pool: GatewayDb['pool'];

  /** `reads` sends the activity log's reads to a replica when there is one (see ReadRouting). */
  constructor(
    db: GatewayDb,
    private readonly reads = new ReadRouting(db),
  ) {
    this.pool = db.pool;
    this.sql = sqlOn(db.pool);
  }

  /** The instance's events after `seq`, oldest first, at most `limit` (a row holding several may pass it: then all of its). */
  async after(instanceId: string, seq: number, limit: number): Promise<StoredEvent[]> {
    const rows = await this.sql.prepared<EventRow>(
      // "Event"."seq", the number: a bare "seq" would be the text of the same name that the row is read as.
      `SELECT ${EVENT_COLUMNS} FROM "Event" WHERE "instanceId" = $1::uuid AND "seq" > $2 ORDER BY "Event"."seq" LIMIT $3`,
      [instanceId, seq, limit],
    );
    return rows.flatMap(eventsOf).filter((event) => event.seq > seq);
  }

  /** The last event number of each instance given that has one (0 for none yet). */
  async lastOf(instanceIds: string[]): Promise<Map<string, number>> {
    const rows = await this.sql.prepared<{ instanceId: string; last: string }>(
      `SELECT "instanceId", "last"::text AS "last" FROM "EventCounter" WHERE "instanceId" = ANY($1::uuid[])`,
      [instanceIds],
    );
    return new Map(rows.map((row) => [row.instanceId, Number(row.last)]));
  }

  /** Of `instanceIds`, those with events not numbered yet. */
  async unnumbered(instanceIds: string[]): Promise<string[]> {
    if (instanceIds.length === 0) return [];
    const rows = await this.sql.prepared<{ instanceId: string }>(
      `SELECT DISTINCT "instanceId" FROM "Event" WHERE "seq" IS NULL AND "instanceId" = ANY($1::uuid[])`,
      [instanceIds],
    );
    return rows.map((row) => row.instanceId);
  }

  /**
   * Numbers the instance's committed events that have no number yet, in the order they were written, and
   * returns its last event number. The counter row is locked first, so numberers of one instance take
   * turns, and the numbering statement (a new snapshot, read committed) sees every number the one before
   * gave: numbers are gap-free, and a reader sees number N only once every number below it is visible.
   */
  async number(instanceId: string): Promise<number> {
    return transaction(this.pool, async (tx) => {
      const [counter] = await tx.prepared<{ last: string }>(
        `INSERT INTO "EventCounter" ("instanceId", "last") VALUES ($1::uuid, 0)
         ON CONFLICT ("instanceId") DO UPDATE SET "last" = "EventCounter"."last" RETURNING "last"`,
        [instanceId],
      );
      // max rather than a count: an event removed meanwhile (the instance erased) leaves no number twice.
      const [row] = await tx.prepared<{ last: string }>(
        `WITH "pending" AS (
           SELECT "id", sum("count") OVER (ORDER BY "id") AS "n" FROM "Event" WHERE "instanceId" = $1::uuid AND "seq" IS NULL
         ), "numbered" AS (
           UPDATE "Event" e SET "seq" = $2::bigint + p."n" FROM "pending" p
           WHERE e."instanceId" = $1::uuid AND e."id" = p."id" RETURNING e."seq"
         )
         UPDATE "EventCounter" SET "last" = COALESCE((SELECT max("seq") FROM "numbered"), $2::bigint)
         WHERE "instanceId" = $1::uuid RETURNING "last"`,
        [instanceId, counter!.last],
      );
      return Number(row!.last);
    });
  }

  /**
   * Numbers what is waiting of each instance given: those something listens to (a webhook, a stream).
   * The others' events wait unnumbered, costing nothing, until a listener arrives and numbers them.
   */
  async numberPending(instanceIds: string[]): Promise<void> {
    for (const instanceId of await this.unnumbered(instanceIds)) await this.number(instanceId);
  }

  /** Writes reads of any instances in one statement (the gateway batches them: events/reads.ts). */
  async addReads(entries: ReadEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.sql.prepared(
      `INSERT INTO "ReadActivity" ("instanceId", "type", "actorKind", "actorId", "object", "address", "at", "times")
       SELECT (r->>'instanceId')::uuid, r->>'type', r->>'actorKind', (r->>'actorId')::uuid, r->'object', r->>'address', (r->>'at')::timestamptz,
         (r->>'times')::int
       FROM jsonb_array_elements($1::jsonb) AS t(r)`,
      [JSON.stringify(entries)],
    );
  }

  /** The owner's activity log: changes and reads, newest first, filtered as asked. */
  async activity(instanceId: string, query: ActivityQuery): Promise<ActivityEntry[]> {
    const values = [instanceId, query.since ?? null, query.until ?? null, query.actorId ?? null, query.type ?? null, query.take];
    // A type ending in "." is a prefix: `type LIKE 'record.%'`; the escape keeps "_" literal.
    const filter = `"instanceId" = $1::uuid AND ($2::timestamptz IS NULL OR "at" >= $2) AND ($3::timestamptz IS NULL OR "at" < $3)
      AND ($4::uuid IS NULL OR "actorId" = $4::uuid)
      AND ($5::text IS NULL OR "type" = $5 OR (right($5, 1) = '.' AND starts_with("type", $5)))`;
    // A change's row may hold several events (`count`): each is an entry, the newest `take` kept.
    const rows = await sqlOn(await this.reads.pool(instanceId)).prepared<ActivityEntry & { count: number }>(
      `(SELECT 'change' AS "kind", "type", "actorKind", "actorId", "object", "address", "at", 1 AS "times", "count" FROM "Event" WHERE ${filter} ORDER BY "at" DESC, "id" DESC LIMIT $6)
       UNION ALL
       (SELECT 'read' AS "kind", "type", "actorKind", "actorId", "object", "address", "at", "times", 1 AS "count" FROM "ReadActivity" WHERE ${filter} ORDER BY "at" DESC LIMIT $6)
       ORDER BY "at" DESC LIMIT $6`,
      values,
    );
    return rows.flatMap((row) => eventsIn(row).reverse()).slice(0, query.take);
  }

  /**
   * What the activity log's entries name, in words, in one statement: accounts (an app's account by the
   * app's title, others by username), files by name, apps by title. Ids that name nothing are left out.
   */
  async names(instanceId: string, ids: { accounts: string[]; files: string[]; apps: string[] }): Promise<ActivityNames> {
    const rows = await sqlOn(await this.reads.pool(instanceId)).prepared<{ kind: keyof ActivityNames; key: string; name: string }>(
      `SELECT 'accounts' AS "kind", u."id"::text AS "key", coalesce(a."record"->>'title', u."username") AS "name"
         FROM "User" u LEFT JOIN "Application" a ON a."instanceId" = u."instanceId" AND a."userId" = u."id"
         WHERE u."instanceId" = $1::uuid AND u."id" = ANY($2::uuid[])
       UNION ALL
       SELECT 'files', f."fileId", f."name" FROM "File" f WHERE f."instanceId" = $1::uuid AND f."fileId" = ANY($3::text[])
       UNION ALL
       SELECT 'apps', a."appId", a."record"->>'title' FROM "Application" a WHERE a."instanceId" = $1::uuid AND a."appId" = ANY($4::text[])`,
      [instanceId, ids.accounts, ids.files, ids.apps],
    );
    const names: ActivityNames = { accounts: new Map(), files: new Map(), apps: new Map() };
    for (const row of rows) names[row.kind].set(row.key, row.name);
    return names;
  }

  /** Every instance's id, for the sweep to go through one instance at a time. */
  async instanceIds(): Promise<string[]> {
    return (await this.sql.prepared<{ id: string }>(`SELECT "id" FROM "Instance" ORDER BY "id"`, [])).map((row) => row.id);
  }

  /**
   * Removes the instance's reads and events older than `before`, at most `limit` of each per call (the
   * sweep calls again while it removes a full batch). Events are the outbox too: a webhook or stream
   * further behind than the retention starts again at the oldest kept. Events never numbered go too: no
   * one listened when they were written, and a listener starts after the newest event.
   */
  async sweep(instanceId: string, before: Date, limit: number): Promise<number> {
    const removed = await this.sql.batch(
      ['ReadActivity', 'Event'].map((table) =>
        statement(
          `DELETE FROM "${table}" WHERE "instanceId" = $1::uuid AND "id" IN (
             SELECT "id" FROM "${table}" WHERE "instanceId" = $1::uuid AND "at" < $2::timestamptz LIMIT $3)`,
          [instanceId, before, limit],
        ),
      ),
    );
    return Math.max(...removed.map((answer) => answer.rowCount));
  }
}

/** Of `fileIds`, those the account may see: it uploaded them or holds a permission on them. */
export async function filesVisibleTo(db: GatewayDb, instanceId: string, userId: string, fileIds: string[]): Promise<Set<string>> {
  if (fileIds.length === 0) return new Set();
  const rows = await sqlOn(db.pool).prepared<{ fileId: string }>(
    `SELECT f."fileId" FROM "File" f WHERE f."instanceId" = $1::uuid AND f."fileId" = ANY($3::text[])
       AND (f."uploaderId" = $2::uuid OR EXISTS (SELECT 1 FROM "FilePermission" p
         WHERE p."instanceId" = $1::uuid AND p."fileId" = f."fileId" AND p."userId" = $2::uuid))`,
    [instanceId, userId, fileIds],
  );
  return new Set(rows.map((row) => row.fileId));
}
