// Apps on an instance: what dex pushed, and the owner's setup, disabling and app tokens.
import type { AppRecord } from '@pds/app-record';
import type { Application, ApplicationRepository, GrantSpec, User, UserRepository } from '@pds/db';
import { ApiError } from '@pds/http';

/**
 * An app's account name. ":" cannot occur in usernames the owner creates (users/service.ts), so an
 * app account can never collide with, or be taken over by, a plain user.
 */
export const appUsername = (appId: string): string => `app:${appId}`;

/** The app's permission sets: write its own namespace; read it and what its record declares. */
export function grantsFor(record: AppRecord): GrantSpec[] {
  const own = [
    { namespace: record.namespace, endpoint: '*', access: 'write' as const },
    { namespace: record.namespace, endpoint: '*', access: 'read' as const },
  ];
  const declared = record.dataRead.map((path) => {
    const [namespace, endpoint] = path.split('/') as [string, string | undefined];
    return { namespace, endpoint: endpoint ?? '*', access: 'read' as const };
  });
  return [...own, ...declared];
}

/** The status object, shaped like the original's HatApplication so its clients read it. */
export function applicationView(app: Application) {
  return {
    application: app.record as AppRecord,
    version: app.version,
    setup: app.setup,
    enabled: app.enabled,
    // The original also ran an external status check here; apps on this cluster have none.
    active: app.enabled,
    ...(app.setup ? { needsUpdating: app.setupVersion !== null && app.version > app.setupVersion } : {}),
  };
}

export class ApplicationService {
  constructor(
    private readonly apps: ApplicationRepository,
    private readonly users: UserRepository,
  ) {}

  list(instanceId: string): Promise<Application[]> {
    return this.apps.list(instanceId);
  }

  async get(instanceId: string, appId: string): Promise<Application> {
    return found(appId, await this.apps.find(instanceId, appId));
  }

  /** Creates the app's account and permission sets (again: a re-setup adopts the newest record). */
  async setUp(instanceId: string, appId: string): Promise<Application> {
    const app = await this.get(instanceId, appId);
    const result = await this.apps.setUp(instanceId, appId, {
      username: appUsername(appId),
      version: app.version,
      grants: grantsFor(app.record as AppRecord),
    });
    return found(appId, result?.application ?? null);
  }

  async disable(instanceId: string, appId: string): Promise<Application> {
    return found(appId, await this.apps.setEnabled(instanceId, appId, false));
  }

  /** The account an app token is issued to: only for an app that is set up and enabled. */
  async tokenAccount(instanceId: string, appId: string): Promise<User> {
    const app = await this.get(instanceId, appId);
    if (!app.setup || !app.enabled || !app.userId) throw ApiError.conflict(`Application ${appId} is not set up and enabled`);
    const user = await this.users.findById(instanceId, app.userId);
    if (!user || user.disabled) throw ApiError.conflict(`Application ${appId} has no usable account; set it up again`);
    return user;
  }
}

function found(appId: string, app: Application | null): Application {
  if (!app) throw ApiError.notFound(`Application ${appId} is not known to this instance`);
  return app;
}
