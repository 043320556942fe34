// What an instance that is not active still answers. Suspended (by the operator): nothing, 423, its
// tokens and data kept for when it resumes. Closing (by its owner): only the owner, and only the calls
// of the closing flow (routes flagged `whileClosing`), 410 for everything else. The pipeline asks first,
// before any token is read; a flagged route's caller is judged once known.
import type { Account } from '@pds/db';
import { ApiError } from '@pds/http';
import type { Access, GatewayRoute } from '../route';
import type { ResolvedInstance } from './registry';

export const SUSPENDED_MESSAGE = 'This instance is suspended by the operator of its cluster; its data is kept';
export const CLOSING_MESSAGE = 'This instance is being closed by its owner';

/** Refuses a call to a suspended instance, or to a closing one outside its closing flow. */
export function checkState(tenant: ResolvedInstance, route: GatewayRoute): void {
  // Dex's pushes are the cluster's own bookkeeping, not a call of the instance's users.
  if ((route.access as Access) === 'dex') return;
  if (tenant.instance.state === 'closing' && route.whileClosing) return;
  requireActive(tenant);
}

/** Refuses everything of an instance that is not active: 423 while suspended, 410 while closing. */
export function requireActive(tenant: ResolvedInstance): void {
  const { state } = tenant.instance;
  if (state === 'suspended') throw ApiError.locked(SUSPENDED_MESSAGE);
  if (state === 'closing') throw ApiError.gone(CLOSING_MESSAGE);
}

/** While the instance is closing, only its owner's account gets through a `whileClosing` route (no account: nobody). */
export function requireOpenTo(tenant: ResolvedInstance, account: Pick<Account, 'kind'> | undefined): void {
  if (tenant.instance.state === 'closing' && account?.kind !== 'owner') throw ApiError.gone(CLOSING_MESSAGE);
}
