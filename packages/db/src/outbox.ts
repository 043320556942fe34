// The transactional outbox. Every change writes its events in its own transaction, as statements of
// their own (sent in the same batch as the change where the change is known beforehand): no event
// without its change, no change without its event. A statement gives each event only a global `id`; its
// per-instance `seq` is given after commit, by the numbering step (EventRepository.number), and only for
// instances something listens to. Numbering in the change's own transaction would hold a per-instance
// counter row locked until the change commits, so one instance's changes would commit one after another
// (docs/events.md).
import { statement, textPerRows, type Sql, type Statement, type TransactionStatements } from './sql';

/** `anonymous`: someone without an account, such as the holder of a share link (its uses are reads, never changes). */
export type ActorKind = 'owner' | 'user' | 'application' | 'system' | 'anonymous';

/**
 * Who makes a change, and from where: every repository write that writes events takes it (the gateway's
 * routes pass the request's, jobs and dex pushes SYSTEM).
 */
export interface Actor {
  kind: ActorKind;
  /** The account's id; absent for the system (jobs, dex pushes). */
  id?: string;
  /** The client address, for the owner's activity log. */
  address?: string;
}

/** The actor of changes no request asked for: jobs, dex pushes, tools. */
export const SYSTEM: Actor = { kind: 'system' };

/** A change's event as code names it. */
export interface NewEvent {
  type: string;
  object: Record<string, unknown>;
}

/** Rows of one INSERT: a few statement texts cover every change, and none binds too many values. */
const ROWS_PER_INSERT = 100;

/** $1 instance, $2–$5 the actor and the time, then the type, count and object(s) of each row. */
const insertEvents = textPerRows(
  (rows) =>
    `INSERT INTO "Event" ("instanceId", "type", "count", "actorKind", "actorId", "object", "address", "at") VALUES ${Array.from(
      { length: rows },
      (_, i) => `($1::uuid, $${6 + 3 * i}, $${7 + 3 * i}::int, $2, $3::uuid, $${8 + 3 * i}::jsonb, $4, $5::timestamptz)`,
    ).join(', ')}`,
);

/**
 * The statements that write these events: plain INSERT … VALUES, for the change's batch or transaction.
 * Events of one type in a row share one outbox row (the records of a batch, the files of a bulk call):
 * a change costs a row, not a row per record. Readers see each event apart (events.ts).
 */
export function eventStatements(instanceId: string, events: NewEvent[], actor: Actor, at = new Date()): Statement[] {
  const rows: { type: string; objects: Record<string, unknown>[] }[] = [];
  for (const { type, object } of events) {
    const last = rows.at(-1);
    if (last?.type === type) last.objects.push(object);
    else rows.push({ type, objects: [object] });
  }
  const statements: Statement[] = [];
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const chunk = rows.slice(start, start + ROWS_PER_INSERT);
    const values: unknown[] = [instanceId, actor.kind, actor.id ?? null, actor.address ?? null, at];
    for (const { type, objects } of chunk) {
      values.push(type, objects.length, JSON.stringify(objects.length === 1 ? objects[0] : objects));
    }
    statements.push(statement(insertEvents(chunk.length), values));
  }
  return statements;
}

/** Writes events inside the transaction `tx` of their change (nothing for an empty list). */
export async function writeEvents(tx: Sql, instanceId: string, events: NewEvent[], actor: Actor): Promise<void> {
  if (events.length > 0) await tx.batch(eventStatements(instanceId, events, actor));
}

/** Ends the change's transaction `tx` with its events: the events and the COMMIT in one round trip. */
export async function commitWithEvents(tx: TransactionStatements, instanceId: string, events: NewEvent[], actor: Actor): Promise<void> {
  if (events.length > 0) await tx.finish(eventStatements(instanceId, events, actor));
}
