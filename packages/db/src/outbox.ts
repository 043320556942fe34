// The transactional outbox. Every change statement carries the CTE below, so the change and its events
// are one statement: there is no moment between them for a crash to fall into. The statement gives each
// event only a global `id`; its per-instance `seq` is given after commit, by the numbering step
// (EventRepository.number), which numbers the committed events of an instance in one short transaction
// at a time. Numbering in the change's own statement would hold a per-instance counter row locked until
// the change commits, so one instance's changes would commit one after another (docs/events.md).
import type { Sql } from './sql';

export type ActorKind = 'owner' | 'user' | 'application' | 'system';

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

/**
 * The CTE (named "evOut") that writes one event per row of `source` (a CTE or row source of the same
 * statement, whose rows `type` and `object` are SQL expressions over). `$1` must be the instance id; the
 * actor and the time are the four parameters from `$first` on: pass `eventValues(actor)` there.
 */
export function eventCte(source: string, type: string, object: string, first: number): string {
  const [kind, id, address, at] = [first, first + 1, first + 2, first + 3].map((n) => `$${n}`);
  return `"evOut" AS (
    INSERT INTO "Event" ("instanceId", "type", "actorKind", "actorId", "object", "address", "at")
    SELECT $1::uuid, ${type}, ${kind}, ${id}::uuid, ${object}, ${address}, ${at}::timestamptz FROM ${source}
    RETURNING "id"
  )`;
}

/** The four values `eventCte` reads: the actor and the time. */
export function eventValues(actor: Actor): unknown[] {
  return [actor.kind, actor.id ?? null, actor.address ?? null, new Date()];
}

/** A change's event as code names it, for changes made by several statements in one transaction. */
export interface NewEvent {
  type: string;
  object: Record<string, unknown>;
}

const INSERT_EVENTS = `WITH ${eventCte(`jsonb_array_elements($2::jsonb) AS j("e")`, `j."e"->>'type'`, `j."e"->'object'`, 3)}
  SELECT count(*)::int AS "count" FROM "evOut"`;

/** Writes events inside the transaction `tx` of their change (nothing for an empty list). */
export async function writeEvents(tx: Sql, instanceId: string, events: NewEvent[], actor: Actor): Promise<void> {
  if (events.length === 0) return;
  await tx.prepared(INSERT_EVENTS, [instanceId, JSON.stringify(events), ...eventValues(actor)]);
}
