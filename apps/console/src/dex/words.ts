// The dex console's words for states and actions.
import type { AuditEntry } from '../staff/api';
import type { PushState } from './api';

export const PUSH_WORDS: Record<PushState, string> = {
  queued: 'Waiting',
  sending: 'Sending',
  retrying: 'Failed, trying again',
  delivered: 'Delivered',
  failed: 'Failed',
};

/** The badge class of a push's state (the stylesheet's colours). */
export const PUSH_BADGE: Record<PushState, string> = {
  queued: 'badge',
  sending: 'badge',
  retrying: 'badge failing',
  delivered: 'badge running',
  failed: 'badge failing',
};

export const INSTANCE_WORDS: Record<string, string> = {
  registered: 'Registered',
  pending: 'Registering',
  'key-mismatch': 'Key changed',
  retired: 'Retired',
};

const ACTIONS: Record<string, string> = {
  'session.create': 'Log in',
  'session.end': 'Log out',
  'app.push': 'Push',
  'push.retry': 'Retry push',
  'application.update': 'Update application',
};

/** An audit entry's action in words; a push tried dry is a preview. */
export const actionName = (entry: AuditEntry) =>
  entry.action === 'app.push' && entry.details?.dryRun === true ? 'Preview' : (ACTIONS[entry.action] ?? entry.action);

/** "admin.pds.example" as the bar and the audit show an administrator: the address itself. */
export const actorName = (actor: string) => actor;

/** "1 time", "3 times". */
export const times = (n: number) => `${n} ${n === 1 ? 'time' : 'times'}`;
