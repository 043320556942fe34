// Password-reset tokens: 256 random bits, in the mail only; the database keeps their SHA-256 (a stolen
// table holds nothing usable), valid 24 hours and until the next request replaces them.
import { createHash, randomBytes } from 'node:crypto';

export const RESET_LIFETIME_MS = 24 * 3600 * 1000;

export const resetTokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

export function newResetToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: resetTokenHash(token) };
}

/** The console's reset page; the token rides in the fragment, which browsers never send to a server (or its logs). */
export const resetLink = (consoleUrl: string, token: string) => `${consoleUrl}/#/reset/${token}`;
