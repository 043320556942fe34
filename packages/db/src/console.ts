// The consoles' own tables, alike in the gateway database (the operator's console) and in dex's (the
// administrators' console): log-in sessions, kept as the SHA-256 of their token, and the audit of every
// action. Neither table has an "instanceId": in the gateway database they are Citus reference tables.
import type { DexDb, GatewayDb } from './clients';
import { containing, sqlOn, type Sql } from './sql';

export interface ConsoleSession {
  actor: string;
  expiresAt: Date;
}

export class ConsoleSessionRepository {
  private readonly sql: Sql;

  constructor(db: GatewayDb | DexDb) {
    this.sql = sqlOn(db.pool);
  }

  async create(tokenHash: string, actor: string, createdAt: Date, expiresAt: Date): Promise<void> {
    await this.sql.count(
      `INSERT INTO "ConsoleSession" ("tokenHash", "actor", "createdAt", "expiresAt") VALUES ($1, $2, $3::timestamptz, $4::timestamptz)`,
      [tokenHash, actor, createdAt, expiresAt],
    );
  }

  /** The session of this token hash while it has not expired. */
  async find(tokenHash: string, now: Date): Promise<ConsoleSession | null> {
    const [row] = await this.sql.prepared<ConsoleSession>(
      `SELECT "actor", "expiresAt" FROM "ConsoleSession" WHERE "tokenHash" = $1 AND "expiresAt" > $2::timestamptz`,
      [tokenHash, now],
    );
    return row ?? null;
  }

  async remove(tokenHash: string): Promise<void> {
    await this.sql.count(`DELETE FROM "ConsoleSession" WHERE "tokenHash" = $1`, [tokenHash]);
  }

  /** Ends every session of `actor` (an operator removed); how many. */
  removeActor(actor: string): Promise<number> {
    return this.sql.count(`DELETE FROM "ConsoleSession" WHERE "actor" = $1`, [actor]);
  }

  /** Drops the sessions that ended before `now` (at each log-in: they are few). */
  removeExpired(now: Date): Promise<number> {
    return this.sql.count(`DELETE FROM "ConsoleSession" WHERE "expiresAt" <= $1::timestamptz`, [now]);
  }
}

export interface AuditRecord {
  at: Date;
  actor: string;
  action: string;
  target: string | null;
  details: Record<string, unknown> | null;
  client: string;
  status: number;
}

export interface AuditEntry extends AuditRecord {
  id: number;
}

export interface AuditQuery {
  /** Entries older than this id (the next page of a newest-first listing). */
  before?: number;
  actor?: string;
  /** An exact action, or a prefix ending in "." (`instance.`). */
  action?: string;
  /** Part of the target (an address), case-insensitive. */
  target?: string;
  take: number;
}

type AuditRow = Omit<AuditEntry, 'id'> & { id: string };

export class AuditRepository {
  private readonly sql: Sql;

  constructor(db: GatewayDb | DexDb) {
    this.sql = sqlOn(db.pool);
  }

  async record(entry: AuditRecord): Promise<void> {
    await this.sql.count(
      `INSERT INTO "AuditEntry" ("at", "actor", "action", "target", "details", "client", "status")
       VALUES ($1::timestamptz, $2, $3, $4, $5::jsonb, $6, $7)`,
      [
        entry.at,
        entry.actor,
        entry.action,
        entry.target,
        entry.details === null ? null : JSON.stringify(entry.details),
        entry.client,
        entry.status,
      ],
    );
  }

  /** Newest first. */
  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const action = query.action?.endsWith('.') ? `${query.action.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : (query.action ?? null);
    const rows = await this.sql.prepared<AuditRow>(
      `SELECT "id"::text AS "id", "at", "actor", "action", "target", "details", "client", "status" FROM "AuditEntry"
       WHERE ($1::int8 IS NULL OR "id" < $1::int8) AND ($2::text IS NULL OR "actor" = $2)
         AND ($3::text IS NULL OR "action" LIKE $3 ESCAPE '\\') AND ($4::text IS NULL OR "target" ILIKE $4 ESCAPE '\\')
       ORDER BY "AuditEntry"."id" DESC LIMIT $5`,
      [query.before ?? null, query.actor ?? null, action, query.target ? containing(query.target) : null, query.take],
    );
    return rows.map((row) => ({ ...row, id: Number(row.id) }));
  }
}

export interface OperatorAccount {
  name: string;
  passwordHash: string;
  createdAt: Date;
}

/** The gateway's operator accounts (the admin console's log-ins besides ADMIN_TOKEN). */
export class OperatorRepository {
  private readonly sql: Sql;

  constructor(db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  /** False when the name is taken. */
  async create(name: string, passwordHash: string, createdAt: Date): Promise<boolean> {
    const added = await this.sql.count(
      `INSERT INTO "Operator" ("name", "passwordHash", "createdAt") VALUES ($1, $2, $3::timestamptz) ON CONFLICT ("name") DO NOTHING`,
      [name, passwordHash, createdAt],
    );
    return added > 0;
  }

  async find(name: string): Promise<OperatorAccount | null> {
    const [row] = await this.sql.prepared<OperatorAccount>(`SELECT "name", "passwordHash", "createdAt" FROM "Operator" WHERE "name" = $1`, [
      name,
    ]);
    return row ?? null;
  }

  async setPassword(name: string, passwordHash: string): Promise<boolean> {
    return (await this.sql.count(`UPDATE "Operator" SET "passwordHash" = $2 WHERE "name" = $1`, [name, passwordHash])) > 0;
  }

  async remove(name: string): Promise<boolean> {
    return (await this.sql.count(`DELETE FROM "Operator" WHERE "name" = $1`, [name])) > 0;
  }

  async list(): Promise<{ name: string; createdAt: Date }[]> {
    return this.sql.prepared(`SELECT "name", "createdAt" FROM "Operator" ORDER BY "name"`, []);
  }
}
