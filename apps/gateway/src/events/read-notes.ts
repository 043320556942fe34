// What each read route tells the owner's activity log (route.ts `read`), in one place.
import type { Reply } from '@pds/http';
import { isOwner } from '../context';
import type { ReadInput } from '../route';
import type { ReadNote } from './reads';

type Note = (input: ReadInput, reply: Reply | undefined) => ReadNote | undefined;

const served = (reply: Reply | undefined) => reply !== undefined && reply.status < 400;

/** Records of a table read by an app or a user (the owner reading her own data is not news to her). */
export const recordsRead: Note = ({ params, caller }, reply) => {
  if (!served(reply) || !caller || isOwner(caller)) return undefined;
  const count = Array.isArray(reply?.json) ? reply.json.length : (reply?.jsonText?.items ?? 1);
  const object = params.recordId
    ? { recordId: String(params.recordId) }
    : { namespace: String(params.namespace), endpoint: String(params.endpoint) };
  return { type: 'records.read', object, count };
};

export const fileContentRead: Note = ({ params }, reply) =>
  served(reply) ? { type: 'file.content', object: { fileId: String(params.fileId) } } : undefined;

export const debitValuesRead: Note = ({ params }, reply) =>
  served(reply) ? { type: 'debit.values', object: { debitKey: String(params.key) } } : undefined;

/** A log-in, or a failed one (no answer): by name, since a failed one has no account to name. */
export const loginTried: Note = ({ req }, reply) => {
  const username = String(req.headers.username ?? '');
  if (!served(reply)) return { type: 'login.failed', object: { username } };
  const userId = String((reply?.json as { userId?: unknown }).userId);
  return { type: 'login', object: { username, userId }, actor: { kind: 'user', id: userId } };
};

export const appTokenIssued: Note = ({ params }, reply) =>
  served(reply) ? { type: 'app.token', object: { appId: String(params.appId) } } : undefined;
