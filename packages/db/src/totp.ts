// The second factor's state of an account (RFC 6238 TOTP): the sealed secret, whether it is in force,
// the last time step accepted (a code is good once), and the hashes of the unused recovery codes.
// Only the log-in and the 2FA settings read it; the per-request account cache never does.
import type { GatewayDb } from './clients';
import { isUuid, sqlOn, type Sql } from './sql';

export interface TotpState {
  secretEnc: string | null;
  enabled: boolean;
  recoveryLeft: number;
}

export class TotpRepository {
  private readonly sql: Sql;

  constructor(db: GatewayDb) {
    this.sql = sqlOn(db.pool);
  }

  async state(instanceId: string, userId: string): Promise<TotpState | null> {
    if (!isUuid(userId)) return null;
    const [row] = await this.sql.prepared<TotpState>(
      `SELECT "totpSecretEnc" AS "secretEnc", "totpEnabled" AS "enabled", cardinality("totpRecoveryHashes") AS "recoveryLeft"
       FROM "User" WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`,
      [instanceId, userId],
    );
    return row ?? null;
  }

  /** Keeps a new secret awaiting confirmation; refused (false) while a second factor is in force. */
  async enrol(instanceId: string, userId: string, secretEnc: string): Promise<boolean> {
    const count = await this.sql.count(
      `UPDATE "User" SET "totpSecretEnc" = $3, "totpLastStep" = 0 WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND NOT "totpEnabled"`,
      [instanceId, userId, secretEnc],
    );
    return count > 0;
  }

  /** Puts the enrolled secret in force with these recovery codes (their hashes). */
  async enable(instanceId: string, userId: string, recoveryHashes: string[]): Promise<boolean> {
    const count = await this.sql.count(
      `UPDATE "User" SET "totpEnabled" = true, "totpRecoveryHashes" = $3::text[]
       WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND "totpSecretEnc" IS NOT NULL AND NOT "totpEnabled"`,
      [instanceId, userId, recoveryHashes],
    );
    return count > 0;
  }

  async disable(instanceId: string, userId: string): Promise<void> {
    await this.sql.count(
      `UPDATE "User" SET "totpEnabled" = false, "totpSecretEnc" = NULL, "totpRecoveryHashes" = '{}', "totpLastStep" = 0
       WHERE "instanceId" = $1::uuid AND "id" = $2::uuid`,
      [instanceId, userId],
    );
  }

  /** Records a code's time step as used; false when it (or a later one) already was: a replay. */
  async useStep(instanceId: string, userId: string, step: number): Promise<boolean> {
    const count = await this.sql.count(
      `UPDATE "User" SET "totpLastStep" = $3 WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND "totpLastStep" < $3`,
      [instanceId, userId, step],
    );
    return count > 0;
  }

  /** Removes a recovery code (its hash) when it is one of the unused ones; false otherwise. */
  async useRecoveryCode(instanceId: string, userId: string, hash: string): Promise<boolean> {
    const count = await this.sql.count(
      `UPDATE "User" SET "totpRecoveryHashes" = array_remove("totpRecoveryHashes", $3)
       WHERE "instanceId" = $1::uuid AND "id" = $2::uuid AND $3 = ANY("totpRecoveryHashes")`,
      [instanceId, userId, hash],
    );
    return count > 0;
  }
}
