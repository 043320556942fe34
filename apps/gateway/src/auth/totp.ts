// The second factor (RFC 6238 TOTP, 6 digits every 30 s, SHA-1: what authenticator apps expect).
// Enrol makes a secret (sealed under MASTER_KEY at rest) and shows it as an otpauth:// URI and a QR
// code; a first valid code puts it in force and hands out ten single-use recovery codes (stored as
// SHA-256). A code is accepted once (its time step is recorded), within one step of clock drift.
import { createHash, randomInt } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import QRCode from 'qrcode';
import type { TotpRepository, UserRepository } from '@pds/db';
import { ApiError, type RateLimit } from '@pds/http';
import { openPrivateKey, sealPrivateKey, type Clock } from '@pds/tokens';
import type { Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';

const PERIOD_S = 30;
const RECOVERY_CODES = 10;
/** Crockford's base32 without look-alikes: 10 of them are 50 bits per code. */
const RECOVERY_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

const hashRecoveryCode = (code: string) =>
  createHash('sha256')
    .update(code.toUpperCase().replace(/[^0-9A-Z]/g, ''))
    .digest('hex');

function newRecoveryCode(): string {
  const chars = Array.from({ length: 10 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

export const CODE_NEEDED = 'A second-factor code is needed: send it in the X-Totp header';
export const CODE_INVALID = 'The second-factor code is not valid';

export class TotpService {
  constructor(
    private readonly totp: TotpRepository,
    private readonly users: UserRepository,
    private readonly masterKey: Buffer,
    private readonly clock: Clock,
    /** The log-in limit: codes tried to confirm or turn off count with log-ins, per account (a stolen token cannot guess on). */
    private readonly limiter: RateLimit,
  ) {}

  async status(tenant: ResolvedInstance, caller: Caller): Promise<{ enabled: boolean; recoveryCodesLeft: number }> {
    const state = await this.totp.state(tenant.instance.id, own(caller));
    return { enabled: state?.enabled ?? false, recoveryCodesLeft: state?.enabled ? state.recoveryLeft : 0 };
  }

  /** A new secret awaiting confirmation (replacing one not yet confirmed); 409 while one is in force. */
  async enrol(tenant: ResolvedInstance, caller: Caller): Promise<{ secret: string; uri: string; qrCode: string }> {
    const user = await this.users.findById(tenant.instance.id, own(caller));
    if (!user) throw ApiError.notAuthenticated();
    const secret = new OTPAuth.Secret({ size: 20 });
    if (!(await this.totp.enrol(tenant.instance.id, user.id, sealPrivateKey(secret.base32, this.masterKey))))
      throw ApiError.conflict('Two-factor authentication is already on; turn it off first');
    const uri = this.generator(secret.base32, tenant.instance.address, user.username).toString();
    // SVG markup, not a data: URL: the console shows it from a blob: address its CSP allows.
    return { secret: secret.base32, uri, qrCode: await QRCode.toString(uri, { type: 'svg', margin: 1, width: 240 }) };
  }

  /** Puts the enrolled secret in force with a first code; the recovery codes are shown this once. */
  async confirm(tenant: ResolvedInstance, caller: Caller, code: string): Promise<{ recoveryCodes: string[] }> {
    const instanceId = tenant.instance.id;
    const userId = own(caller);
    await this.limiter.consume(`${instanceId}:totp:${userId}`);
    const state = await this.totp.state(instanceId, userId);
    if (!state?.secretEnc || state.enabled) throw ApiError.conflict('Nothing to confirm: enrol first');
    if (!(await this.validCode(instanceId, userId, state.secretEnc, code))) throw ApiError.badRequest(CODE_INVALID);
    const recoveryCodes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
    if (!(await this.totp.enable(instanceId, userId, recoveryCodes.map(hashRecoveryCode))))
      throw ApiError.conflict('Nothing to confirm: enrol first');
    return { recoveryCodes };
  }

  /** Turns the second factor off; it takes a current code (or a recovery code). */
  async disable(tenant: ResolvedInstance, caller: Caller, code: string): Promise<void> {
    const userId = own(caller);
    await this.limiter.consume(`${tenant.instance.id}:totp:${userId}`);
    if (!(await this.check(tenant.instance.id, userId, code))) throw ApiError.badRequest(CODE_INVALID);
    await this.totp.disable(tenant.instance.id, userId);
  }

  /** At log-in: a current code (each used once) or an unused recovery code (used up). */
  async check(instanceId: string, userId: string, code: string): Promise<boolean> {
    const state = await this.totp.state(instanceId, userId);
    if (!state?.enabled || !state.secretEnc) return false;
    if (/^\s*\d{6}\s*$/.test(code)) return this.validCode(instanceId, userId, state.secretEnc, code.trim());
    return code.length <= 64 && this.totp.useRecoveryCode(instanceId, userId, hashRecoveryCode(code));
  }

  private async validCode(instanceId: string, userId: string, secretEnc: string, code: string): Promise<boolean> {
    if (!/^\d{6}$/.test(code)) return false;
    const timestamp = this.clock().getTime();
    const delta = this.generator(openPrivateKey(secretEnc, this.masterKey)).validate({ token: code, timestamp, window: 1 });
    if (delta === null) return false;
    return this.totp.useStep(instanceId, userId, Math.floor(timestamp / 1000 / PERIOD_S) + delta);
  }

  private generator(base32: string, issuer = '', label = ''): OTPAuth.TOTP {
    return new OTPAuth.TOTP({ issuer, label, secret: OTPAuth.Secret.fromBase32(base32), algorithm: 'SHA1', digits: 6, period: PERIOD_S });
  }
}

/** The caller's own account; apps have no second factor. */
function own(caller: Caller): string {
  if (caller.claims.accessScope === 'application') throw ApiError.forbidden('An application has no second factor');
  return caller.user.id;
}
