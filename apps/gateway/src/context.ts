// Who calls: the account behind a request's token, as the pipeline (pipeline.ts) found it.
import { ApiError } from '@pds/http';
import type { Account, Actor } from '@pds/db';
import type { TokenClaims } from '@pds/tokens';

export interface Caller {
  /** The account behind the token, as cached (auth/accounts.ts). */
  user: Account;
  claims: TokenClaims;
  token: string;
  /** Who the request's changes are made by, and from where: what the outbox records of them. */
  actor: Actor;
}

/** The caller when it is the instance owner; 403 otherwise (services check this themselves). */
export function requireOwner(caller: Caller): Caller {
  if (!isOwner(caller)) throw ApiError.forbidden('Only the owner of this instance may do this');
  return caller;
}

export function isOwner(caller: Caller): boolean {
  return caller.user.kind === 'owner' && caller.claims.accessScope === 'owner';
}
