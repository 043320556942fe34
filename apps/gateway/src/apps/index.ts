// Wiring of the apps feature: the dex push receiver, the owner's routes, and the app-token guard.
import type { Router } from 'express';
import { ApplicationRepository, UserRepository, type GatewayDb } from '@pds/db';
import type { AccountCache } from '../auth/accounts';
import type { AuthService } from '../auth/service';
import type { Clock } from '@pds/tokens';
import type { DexKeySource } from './dex-keys';
import { dexPushRoutes } from './dex-routes';
import { enabledAppGuard } from './guard';
import { applicationRoutes } from './routes';
import { ApplicationService } from './service';

export { HttpDexKeySource, staticDexKey, type DexKeySource } from './dex-keys';

export function applicationsFeature(
  db: GatewayDb,
  auth: AuthService,
  dexKeys: DexKeySource,
  clock: Clock,
  accounts: AccountCache,
): { pushRoutes: Router; routes: Router } {
  const apps = new ApplicationRepository(db, accounts.changed);
  auth.addGuard(enabledAppGuard(accounts));
  return {
    pushRoutes: dexPushRoutes(apps, dexKeys, clock),
    routes: applicationRoutes(new ApplicationService(apps, new UserRepository(db, accounts.changed)), auth),
  };
}
