import type { AccountCache } from '../auth/accounts';
import type { AccountGuard } from '../auth/service';

/**
 * Checked on every request, so disabling an app stops its tokens at once: an app token is accepted
 * only while its app is enabled and still bound to the token's account. The `application` claim and
 * an app account always come together; either one alone is refused.
 */
export function enabledAppGuard(accounts: AccountCache): AccountGuard {
  return async (tenant, user, application) => {
    const isAppAccount = user.kind === 'application';
    if (!isAppAccount && application === undefined) return true;
    if (!isAppAccount || application === undefined) return false;
    const app = await accounts.app(tenant.instance.id, application);
    return app !== null && app.enabled && app.userId === user.id;
  };
}
