// Wiring of the apps feature: the dex push receiver, the owner's routes, and the app-token guard.
import type { Router } from 'express';
import { ApplicationRepository, DataChangeRepository, UserRepository, type GatewayDb } from '@pds/db';
import type { AccountCache } from '../auth/accounts';
import type { DebitService } from '../data/debits';
import type { AuthService } from '../auth/service';
import type { Clock } from '@pds/tokens';
import type { DexKeySource } from './dex-keys';
import { DexPushService } from './dex-push';
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
  debits: DebitService,
  accounts: AccountCache,
): { pushRoutes: Router; routes: Router; origins: (instanceId: string) => Promise<string[]> } {
  const apps = new ApplicationRepository(db, accounts.changed);
  auth.addGuard(enabledAppGuard(accounts));
  const service = new ApplicationService(apps, new UserRepository(db, accounts.changed), debits, new DataChangeRepository(db), auth);
  return {
    pushRoutes: dexPushRoutes(new DexPushService(apps, dexKeys, clock)),
    routes: applicationRoutes(service),
    origins: (instanceId) => service.origins(instanceId),
  };
}
