// Password hashing (scrypt from node:crypto) and the strength rule for new passwords: instance accounts',
// share links' and the consoles' (operators on the gateway, administrators on dex).
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';

const PARAMS = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function scryptAsync(password: string, salt: Buffer, params: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, { ...params, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$<salt b64>$<hash b64>`: parameters travel with the hash so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Verified against when the user does not exist, so both failures take the same time. */
export const DECOY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/**
 * Whether `password` is the one `stored` hashes. Without a stored hash (no such account, or none set) it
 * is checked against the decoy and refused, so a wrong name and a wrong password take the same time.
 */
export async function matchesStored(password: string, stored: string | null | undefined): Promise<boolean> {
  const matches = await verifyPassword(password, stored ?? DECOY_HASH);
  return matches && stored != null;
}

export const PASSWORD_RULE = 'must be 8 to 256 characters and not a common or easily guessed password (try a few unrelated words)';

const zxcvbn = new ZxcvbnFactory({
  dictionary: { ...common.dictionary, ...en.dictionary },
  graphs: common.adjacencyGraphs,
  translations: en.translations,
});

/** Null when strong enough, else the rule it breaks. Personal inputs (username, name, e-mail) count as guessable. */
export function passwordProblem(password: string, personal: string[] = []): string | null {
  if (password.length < 8 || password.length > 256) return PASSWORD_RULE;
  // zxcvbn's cost grows with length; beyond 100 characters a password is long enough to pass on length alone.
  if (password.length > 100) return null;
  return zxcvbn.check(password, personal.filter(Boolean)).score >= 3 ? null : PASSWORD_RULE;
}
