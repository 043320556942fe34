// Apps on an instance: what dex pushed, and the owner's setup, disabling and app tokens.
import type { AppRecord } from '@pds/app-record';
import type { Application, ApplicationRepository, DataChangeRepository, GrantSpec, UserRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import type { AuthService } from '../auth/service';
import { isOwner, requireOwner, type Caller } from '../context';
import { appDebitKey, appBundle } from '../data/app-debit';
import type { DebitService } from '../data/debits';
import type { ResolvedInstance } from '../instances/registry';
import { appOrigins, hatApplication, hatApplicationContent, type HatApplication } from './hat-application';

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

/** Names the app a call is about. */
export interface AppInput {
  appId: string;
}

/** An app token, and the account it is issued to. */
export interface AppToken {
  accessToken: string;
  userId: string;
}

export class ApplicationService {
  constructor(
    private readonly apps: ApplicationRepository,
    private readonly users: UserRepository,
    private readonly debits: DebitService,
    private readonly records: DataChangeRepository,
    private readonly auth: AuthService,
  ) {}

  async list(tenant: ResolvedInstance, caller: Caller): Promise<HatApplication[]> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    return Promise.all((await this.apps.list(instanceId)).map((app) => this.status(instanceId, app)));
  }

  /** The origins of the apps pushed to this instance: CORS allows them by default. */
  async origins(instanceId: string): Promise<string[]> {
    return [...new Set((await this.apps.list(instanceId)).flatMap((app) => appOrigins(app.record as AppRecord)))];
  }

  /** What the app asks to be allowed, for anyone about to consent to it (the original's `hmi`). */
  async consent(tenant: ResolvedInstance, input: AppInput): Promise<ReturnType<typeof hatApplicationContent>> {
    const app = await this.apps.find(tenant.instance.id, input.appId);
    if (!app) throw ApiError.notFound(`Application configuration for ID ${input.appId} could not be found`);
    return hatApplicationContent(app);
  }

  /** The owner, or the app itself (an app may ask whether it is still enabled). */
  async get(tenant: ResolvedInstance, caller: Caller, input: AppInput): Promise<HatApplication> {
    if (!isOwner(caller) && caller.claims.application !== input.appId) throw ApiError.forbidden();
    return this.status(tenant.instance.id, await this.find(tenant.instance.id, input.appId));
  }

  /** Creates the app's account and permission sets (again: a re-setup adopts the newest record). */
  async setUp(tenant: ResolvedInstance, caller: Caller, input: AppInput): Promise<HatApplication> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    const app = await this.find(instanceId, input.appId);
    const result = await this.apps.setUp(
      instanceId,
      input.appId,
      {
        username: appUsername(input.appId),
        version: app.version,
        grants: grantsFor(app.record as AppRecord),
      },
      caller.actor,
    );
    const application = found(input.appId, result?.application ?? null);
    await this.debits.enableAppDebit(instanceId, app.record as AppRecord, application.userId as string, caller.actor);
    return this.status(instanceId, application);
  }

  async disable(tenant: ResolvedInstance, caller: Caller, input: AppInput): Promise<HatApplication> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    const app = found(input.appId, await this.apps.setEnabled(instanceId, input.appId, false, caller.actor));
    await this.debits.disableAppDebit(instanceId, input.appId, caller.actor);
    return this.status(instanceId, app);
  }

  /** The owner's app token for the app (in the body only: the X-Auth-Token header carries the owner's own session). */
  async accessToken(tenant: ResolvedInstance, caller: Caller, input: AppInput): Promise<AppToken> {
    requireOwner(caller);
    return this.issue(tenant, await this.find(tenant.instance.id, input.appId));
  }

  /**
   * For the owner's login page (`#/hatlogin`): the app's token, only when `redirect` lies on one of
   * the app's own origins, so a link naming a foreign redirect cannot carry the token away.
   */
  async loginRedirect(
    tenant: ResolvedInstance,
    caller: Caller,
    input: AppInput & { redirect: string },
  ): Promise<AppToken & { redirect: string }> {
    requireOwner(caller);
    const app = await this.find(tenant.instance.id, input.appId);
    let target: URL;
    try {
      target = new URL(input.redirect);
    } catch {
      throw ApiError.badRequest('redirect: must be an absolute URL');
    }
    if (!appOrigins(app.record as AppRecord).includes(target.origin)) {
      throw ApiError.badRequest(`redirect: ${target.origin} is not an origin of application ${input.appId}`);
    }
    const token = await this.issue(tenant, app);
    target.searchParams.set('token', token.accessToken);
    return { ...token, redirect: target.toString() };
  }

  /** The app in HAT's shape, with its state computed now: its debit and its newest data. */
  private async status(instanceId: string, app: Application): Promise<HatApplication> {
    const record = app.record as AppRecord;
    const [debitActive, mostRecentData] = await Promise.all([
      appBundle(record) && app.enabled ? this.debits.isActive(instanceId, appDebitKey(record.id)) : Promise.resolve(true),
      this.records.newestIn(instanceId, record.namespace),
    ]);
    return hatApplication(app, { debitActive, mostRecentData });
  }

  private async find(instanceId: string, appId: string): Promise<Application> {
    return found(appId, await this.apps.find(instanceId, appId));
  }

  /** A token for the app's account: only for an app that is set up and enabled. */
  private async issue(tenant: ResolvedInstance, app: Application): Promise<AppToken> {
    if (!app.setup || !app.enabled || !app.userId) throw ApiError.conflict(`Application ${app.appId} is not set up and enabled`);
    const user = await this.users.findById(tenant.instance.id, app.userId);
    if (!user || user.disabled) throw ApiError.conflict(`Application ${app.appId} has no usable account; set it up again`);
    return { accessToken: await this.auth.issue(tenant, user, { application: app.appId }), userId: user.id };
  }
}

function found(appId: string, app: Application | null): Application {
  if (!app) throw ApiError.notFound(`Application ${appId} is not known to this instance`);
  return app;
}
