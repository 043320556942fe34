// Dex's administrators' console: log-in with an administrator's console password (`pnpm dex admin
// password`) or owner token (verified as every dex token is) into a session cookie; the certified clusters, the apps with their versions, the registered
// and retired instances with their keys' fingerprints; an app update pushed to selected instances
// (previewed, or tried dry) under update-application's rules, then each instance's push followed and
// retried. Every change is in dex's audit.
import type { IncomingMessage } from 'node:http';
import type {
  AdminRepository,
  AppPush,
  AppRecordRepository,
  AppVersion,
  CertifiedClusterRepository,
  RegisteredInstance,
  RegisteredInstanceRepository,
  RegisteredInstanceSearch,
} from '@pds/db';
import { ApiError, type Client, type ConsoleLogIn, type ConsoleSessions } from '@pds/http';
import { jobIds, type Producer, type QueueInspector } from '@pds/queue';
import { parseAppRecord } from '@pds/app-record';
import { matchesStored } from '@pds/tokens';
import type { InstanceTokenVerifier } from '../auth';
import { parseRecord, type AppUpdateService, type PushSelection } from '../apps/service';

export interface PushRequest extends PushSelection {
  /** The record to certify as the app's next version. */
  record: unknown;
  /** Only say who would receive it; store and queue nothing. */
  dryRun?: boolean;
}

/** An administrator's instance address and console password, or an administrator's owner token. */
export type LogIn = { address: string; password: string } | { token: string };

export class DexConsoleService {
  constructor(
    private readonly updates: AppUpdateService,
    private readonly verifier: InstanceTokenVerifier,
    private readonly sessions: ConsoleSessions,
    private readonly logIns: ConsoleLogIn,
    private readonly admins: AdminRepository,
    private readonly clusters: CertifiedClusterRepository,
    private readonly instances: RegisteredInstanceRepository,
    private readonly apps: AppRecordRepository,
    private readonly appPush: Producer<'app-push'>,
    private readonly queue: QueueInspector,
  ) {}

  /**
   * A session for an administrator: by address and console password (401 alike for an unknown address,
   * one without a password and a wrong password), or by owner token (401/403 as update-application answers).
   */
  async logIn(input: LogIn, client: Client): Promise<{ setCookie: string; actor: string; expiresAt: Date }> {
    if ('address' in input) {
      return this.logIns.logIn(
        {
          actor: input.address,
          method: 'password',
          accept: async () => {
            if (!(await matchesStored(input.password, await this.admins.passwordHash(input.address))))
              throw ApiError.notAuthenticated('Wrong address or password');
          },
        },
        client,
      );
    }
    // Who a refused token claims to be is not recorded: only a verified token names its instance.
    const caller = await this.verifier.verify(input.token).catch((error: unknown) => {
      if (error instanceof ApiError) return null;
      throw error;
    });
    return this.logIns.logIn(
      {
        actor: caller?.iss ?? 'unknown',
        method: 'owner-token',
        accept: async () => {
          if (!caller) throw ApiError.notAuthenticated();
          await this.updates.requireAdmin(caller);
        },
      },
      client,
    );
  }

  async whoIs(req: IncomingMessage, client: Client): Promise<{ actor?: string }> {
    const session = await this.sessions.current(req, client);
    return session ? { actor: session.actor } : {};
  }

  logOut(req: IncomingMessage, client: Client): Promise<string> {
    return this.sessions.end(req, client);
  }

  clusterList(): Promise<string[]> {
    return this.clusters.list();
  }

  instancePage(search: RegisteredInstanceSearch): Promise<{ total: number; instances: RegisteredInstance[] }> {
    return this.instances.page(search);
  }

  instanceCounts() {
    return this.instances.counts();
  }

  appList(): Promise<AppVersion[]> {
    return this.apps.latest();
  }

  async versions(appId: string): Promise<AppVersion[]> {
    const versions = await this.apps.versions(appId);
    if (versions.length === 0) throw ApiError.notFound(`There is no app ${appId}`);
    return versions;
  }

  /** The receivers, and unless it is a dry run, the new version queued for them. */
  async push(appId: string, request: PushRequest, actor: string): Promise<{ targets: string[]; version?: number }> {
    const record = parseRecord(request.record);
    if (record.id !== appId) throw ApiError.badRequest(`record.id: must be ${appId}, the app being updated`);
    const targets = await this.updates.targets(request, appId);
    if (targets.length === 0) throw ApiError.badRequest('No instance matches: choose other instances');
    if (request.dryRun) return { targets };
    const { version } = await this.updates.push(record, actor, targets);
    return { targets, version };
  }

  pushes(appId: string, version: number): Promise<AppPush[]> {
    return this.apps.pushes(appId, version);
  }

  /** Delivers a push now: its failed (or backing-off) job runs again, or it is queued afresh if its job is gone. */
  async retry(pushId: string): Promise<AppPush> {
    const push = await this.apps.findPush(pushId);
    if (!push) throw ApiError.notFound(`There is no push ${pushId}`);
    if (push.state === 'delivered') throw ApiError.conflict('That push was delivered');
    await this.apps.requeue(push.id);
    const outcome = await this.queue.retry('app-push', jobIds.appPush(push.id));
    if (outcome !== 'retried') {
      const [version] = (await this.apps.versions(push.appId)).filter((v) => v.version === push.version);
      const parsed = parseAppRecord(version?.record);
      if (!parsed.success) throw ApiError.conflict('The stored record no longer validates: push a new version');
      await this.appPush.enqueue(
        { pushId: push.id, address: push.address, record: parsed.record, version: push.version },
        jobIds.appPush(push.id),
      );
    }
    return (await this.apps.findPush(push.id))!;
  }
}
