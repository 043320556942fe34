// The operator console's words for figures and states.
import { formatBytes } from '../ui';

export const STATE_WORDS: Record<string, string> = { active: 'Active', suspended: 'Suspended', closing: 'Closing' };
export const DEX_WORDS: Record<string, string> = { pending: 'Registering', registered: 'Registered', failed: 'Registration failed' };

/** "12 MiB of 1.0 GiB" */
export const ofQuota = (used: number, quota: number) => `${formatBytes(used)} of ${formatBytes(quota)}`;

/** A size as an operator types it: bytes, or a number with KiB, MiB, GiB or TiB; null when it is none of these. */
export function parseSize(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(k|m|g|t)?i?b?\s*$/i.exec(text);
  if (!match) return null;
  const power = match[2] ? 'kmgt'.indexOf(match[2].toLowerCase()) + 1 : 0;
  const bytes = Math.round(Number(match[1]) * 1024 ** power);
  return bytes >= 1 && Number.isSafeInteger(bytes) ? bytes : null;
}
