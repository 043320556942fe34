// Apps on an instance: what dex pushed, and the owner's setup, disabling and app tokens.
import type { AppRecord } from '@pds/app-record';
import type { Application, ApplicationRepository, DataChangeRepository, GrantSpec, User, UserRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { appDebitKey, appBundle, type DebitService } from '../data/debits';
import { appOrigins, hatApplication, type HatApplication } from './hat-application';

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

export class ApplicationService {
  constructor(
    private readonly apps: ApplicationRepository,
    private readonly users: UserRepository,
    private readonly debits: DebitService,
    private readonly records: DataChangeRepository,
  ) {}

  async list(instanceId: string): Promise<HatApplication[]> {
    return Promise.all((await this.apps.list(instanceId)).map((app) => this.status(instanceId, app)));
  }

  /** The origins of the apps pushed to this instance: CORS allows them by default. */
  async origins(instanceId: string): Promise<string[]> {
    return [...new Set((await this.apps.list(instanceId)).flatMap((app) => appOrigins(app.record as AppRecord)))];
  }

  /** The app in HAT's shape, with its state computed now: its debit and its newest data. */
  async status(instanceId: string, app: Application): Promise<HatApplication> {
    const record = app.record as AppRecord;
    const [debitActive, mostRecentData] = await Promise.all([
      appBundle(record) && app.enabled ? this.debits.isActive(instanceId, appDebitKey(record.id)) : Promise.resolve(true),
      this.records.newestIn(instanceId, record.namespace),
    ]);
    return hatApplication(app, { debitActive, mostRecentData });
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
    const application = found(appId, result?.application ?? null);
    await this.debits.enableAppDebit(instanceId, app.record as AppRecord, application.userId as string);
    return application;
  }

  async disable(instanceId: string, appId: string): Promise<Application> {
    const app = found(appId, await this.apps.setEnabled(instanceId, appId, false));
    await this.debits.disableAppDebit(instanceId, appId);
    return app;
  }

  /**
   * For the owner's login page (`#/hatlogin`): the app's token, only when `redirect` lies on one of
   * the app's own origins, so a link naming a foreign redirect cannot carry the token away.
   */
  async loginRedirect(instanceId: string, appId: string, redirect: string): Promise<{ user: User; redirect: URL }> {
    const app = await this.get(instanceId, appId);
    let target: URL;
    try {
      target = new URL(redirect);
    } catch {
      throw ApiError.badRequest('redirect: must be an absolute URL');
    }
    if (!appOrigins(app.record as AppRecord).includes(target.origin)) {
      throw ApiError.badRequest(`redirect: ${target.origin} is not an origin of application ${appId}`);
    }
    return { user: await this.tokenAccount(instanceId, appId), redirect: target };
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
