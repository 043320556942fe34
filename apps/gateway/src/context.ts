// What the gateway learns about a request before a handler runs: which instance it is for, and who calls.
import type { Request } from 'express';
import { ApiError } from '@pds/http';
import type { Account } from '@pds/db';
import type { TokenClaims } from '@pds/tokens';
import type { ResolvedInstance } from './instances/registry';

export interface Caller {
  /** The account behind the token, as cached (auth/accounts.ts). */
  user: Account;
  claims: TokenClaims;
  token: string;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by the tenancy middleware for every request to an instance address. */
      tenant?: ResolvedInstance;
      /** Set by the authentication middleware when a valid token came with the request. */
      caller?: Caller;
    }
  }
}

export function tenantOf(req: Request): ResolvedInstance {
  if (!req.tenant) throw new Error('tenant middleware did not run for this route');
  return req.tenant;
}

/** The authenticated caller; 401 when the request carried no valid token. */
export function callerOf(req: Request): Caller {
  if (!req.caller) throw ApiError.notAuthenticated();
  return req.caller;
}

/** The caller, who must be the instance owner (own login token, not an app token); 403 otherwise. */
export function ownerOf(req: Request): Caller {
  return requireOwner(callerOf(req));
}

/** The caller when it is the instance owner; 403 otherwise (services check this themselves). */
export function requireOwner(caller: Caller): Caller {
  if (!isOwner(caller)) throw ApiError.forbidden('Only the owner of this instance may do this');
  return caller;
}

export function isOwner(caller: Caller): boolean {
  return caller.user.kind === 'owner' && caller.claims.accessScope === 'owner';
}
