// The secrets of share links: the token in a link's address (random, stored only as its SHA-256), and
// the proof a visitor holds in a cookie once they gave a link's password (an HMAC under a key derived
// from the master key, so any gateway of the cluster honours it and nobody can make one without it).
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** 24 random bytes: 192 bits, 32 base64url characters. */
const TOKEN_BYTES = 24;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32}$/;

export function newLinkToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** Whether a path segment could be a token at all: anything else names no link, and costs no query. */
export function isLinkToken(text: string): boolean {
  return TOKEN_SHAPE.test(text);
}

/**
 * What the database keeps of a token. A lookup by it is an index comparison of hashes: its timing can
 * tell at most how a hash begins, which brings an attacker no closer to a token of 192 random bits.
 */
export function hashLinkToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The cookie a visitor keeps after giving a link's password: one per link, scoped to its address. */
export const UNLOCK_COOKIE = 'pds-link';

/**
 * Proofs that a visitor gave a link's password: `<expiry ms>.<HMAC>` over the instance, the link and the
 * expiry. Stateless, so every gateway checks them alike; the link's own state (revoked, expired) is
 * still checked on every use.
 */
export class UnlockProofs {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'pds/gateway/share-link-unlock/v1', 32));
  }

  issue(instanceId: string, linkId: string, expiresAtMs: number): string {
    return `${expiresAtMs}.${this.mac(instanceId, linkId, expiresAtMs)}`;
  }

  /** Whether `proof` unlocks this link at `nowMs`. */
  holds(proof: string | undefined, instanceId: string, linkId: string, nowMs: number): boolean {
    const [expiry, mac, extra] = (proof ?? '').split('.');
    const expiresAtMs = Number(expiry);
    if (!mac || extra !== undefined || !Number.isSafeInteger(expiresAtMs) || expiresAtMs <= nowMs) return false;
    const given = Buffer.from(mac, 'base64url');
    const expected = Buffer.from(this.mac(instanceId, linkId, expiresAtMs), 'base64url');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private mac(instanceId: string, linkId: string, expiresAtMs: number): string {
    return createHmac('sha256', this.key).update(`${instanceId}.${linkId}.${expiresAtMs}`).digest('base64url');
  }
}
