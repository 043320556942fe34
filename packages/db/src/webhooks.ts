// Applications' webhook subscriptions and their delivery cursor (the outbox is read through EventRepository).
import type { GatewayDb } from './clients';
import { isUuid, sqlOn, type Sql } from './sql';

export type WebhookState = 'ok' | 'retrying' | 'failed';

export interface Webhook {
  instanceId: string;
  id: string;
  appId: string;
  url: string;
  events: string[];
  namespaces: string[];
  /** The last event number delivered, or passed over as not the app's to see. */
  deliveredSeq: number;
  state: WebhookState;
  lastError: string | null;
  failingSince: Date | null;
  createdAt: Date;
}

/** A subscription behind its instance's events, with the address of the instance (for the signature's `iss`). */
export interface DueWebhook {
  instanceId: string;
  id: string;
}

const COLUMNS = `"instanceId", "id", "appId", "url", "events", "namespaces", "deliveredSeq", "state", "lastError", "failingSince", "createdAt"`;

/** pg hands int8 over as text. */
type Row = Omit<Webhook, 'deliveredSeq'> & { deliveredSeq: string };
const toWebhook = (row: Row): Webhook => ({ ...row, deliveredSeq: Number(row.deliveredSeq) });

export class WebhookRepository {
  private readonly sql: Sql;

  constructor(db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  /** A new subscription, delivering the events after `deliveredSeq` (the instance's newest one now). */
  async create(
    instanceId: string,
    webhook: Pick<Webhook, 'id' | 'appId' | 'url' | 'events' | 'namespaces' | 'deliveredSeq'>,
    now: Date,
  ): Promise<Webhook> {
    const [row] = await this.sql.prepared<Row>(
      `INSERT INTO "Webhook" ("instanceId", "id", "appId", "url", "events", "namespaces", "deliveredSeq", "createdAt")
       VALUES ($1::uuid, $2::uuid, $3, $4, $5::text[], $6::text[], $7, $8::timestamptz)
       RETURNING ${COLUMNS}`,
      [instanceId, webhook.id, webhook.appId, webhook.url, webhook.events, webhook.namespaces, webhook.deliveredSeq, now],
    );
    return toWebhook(row as Row);
  }

  async list(instanceId: string, appId: string): Promise<Webhook[]> {
    const rows = await this.sql.prepared<Row>(
      `SELECT ${COLUMNS} FROM "Webhook" WHERE "instanceId" = $1::uuid AND "appId" = $2 ORDER BY "createdAt", "id"`,
      [instanceId, appId],
    );
    return rows.map(toWebhook);
  }

  async find(instanceId: string, id: string): Promise<Webhook | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.sql.prepared<Row>(`SELECT ${COLUMNS} FROM "Webhook" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`, [
      instanceId,
      id,
    ]);
    return row ? toWebhook(row) : null;
  }

  /** True when it existed. */
  async remove(instanceId: string, appId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const count = await this.sql.count(`DELETE FROM "Webhook" WHERE "instanceId" = $1::uuid AND "appId" = $2 AND "id" = $3::uuid`, [
      instanceId,
      appId,
      id,
    ]);
    return count > 0;
  }

  /** Subscriptions with events still to deliver (failed ones wait for their app to subscribe again). */
  /** The instances with a subscription that still delivers: those whose events the worker numbers (across instances). */
  async subscribedInstances(): Promise<string[]> {
    const rows = await this.sql.prepared<{ instanceId: string }>(
      `SELECT DISTINCT w."instanceId" FROM "Webhook" w JOIN "Instance" i ON i."id" = w."instanceId" WHERE w."state" <> 'failed'`,
      [],
    );
    return rows.map((row) => row.instanceId);
  }

  due(limit: number): Promise<DueWebhook[]> {
    return this.sql.prepared<DueWebhook>(
      `SELECT w."instanceId", w."id" FROM "Webhook" w
       JOIN "EventCounter" c ON c."instanceId" = w."instanceId"
       WHERE w."deliveredSeq" < c."last" AND w."state" <> 'failed'
       LIMIT $1`,
      [limit],
    );
  }

  /**
   * Moves the cursor from `from` on to `to` and clears a failure; false when the cursor was no longer at
   * `from` (another run of the job got further, after a worker lost its lock): the caller stops there.
   */
  async advance(instanceId: string, id: string, from: number, to: number): Promise<boolean> {
    const moved = await this.sql.count(
      `UPDATE "Webhook" SET "deliveredSeq" = $4, "state" = 'ok', "lastError" = NULL, "failingSince" = NULL
       WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND "deliveredSeq" = $3`,
      [instanceId, id, from, to],
    );
    return moved > 0;
  }

  /** Notes a failed try: `retrying` from its first failure on, or `failed` for good. */
  async failing(instanceId: string, id: string, state: 'retrying' | 'failed', error: string, since: Date): Promise<void> {
    await this.sql.count(
      `UPDATE "Webhook" SET "state" = $3, "lastError" = $4, "failingSince" = COALESCE("failingSince", $5::timestamptz)
       WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`,
      [instanceId, id, state, error.slice(0, 500), since],
    );
  }
}
