// Webhook subscriptions: an app (its own token) or the owner subscribes the app to the events it may see.
// The address must be on the app's certified origin (its dex record), so no one can aim the cluster at a
// host of their choosing; the delivery job (jobs/webhook-delivery.ts) also refuses private addresses.
import { randomUUID } from 'node:crypto';
import type { AppRecord } from '@pds/app-record';
import type { ApplicationRepository, EventRepository, Webhook, WebhookRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import type { Clock } from '@pds/tokens';
import { appOrigins } from '../apps/hat-application';
import { isOwner, type Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';

export interface WebhookInput {
  url: string;
  events?: string[];
  namespaces?: string[];
}

export class WebhookService {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly apps: ApplicationRepository,
    private readonly events: EventRepository,
    private readonly clock: Clock,
  ) {}

  async create(tenant: ResolvedInstance, caller: Caller, input: { appId: string; body: WebhookInput }) {
    const record = await this.app(tenant, caller, input.appId);
    let url: URL;
    try {
      url = new URL(input.body.url);
    } catch {
      throw ApiError.badRequest('url: must be an absolute URL');
    }
    if (!appOrigins(record).includes(url.origin))
      throw ApiError.badRequest(`url: must be on the application's own origin (${appOrigins(record).join(', ')})`);
    const webhook = await this.webhooks.create(
      tenant.instance.id,
      {
        id: randomUUID(),
        appId: input.appId,
        url: url.toString(),
        events: [...new Set(input.body.events ?? [])],
        namespaces: [...new Set(input.body.namespaces ?? [])],
        // After every change made before now, numbered now if it was not yet.
        deliveredSeq: await this.events.number(tenant.instance.id),
      },
      this.clock(),
    );
    return shown(webhook);
  }

  async list(tenant: ResolvedInstance, caller: Caller, input: { appId: string }) {
    await this.app(tenant, caller, input.appId);
    return (await this.webhooks.list(tenant.instance.id, input.appId)).map(shown);
  }

  async remove(tenant: ResolvedInstance, caller: Caller, input: { appId: string; webhookId: string }) {
    await this.app(tenant, caller, input.appId);
    if (!(await this.webhooks.remove(tenant.instance.id, input.appId, input.webhookId))) throw ApiError.notFound('No such webhook');
  }

  /** The app's record, for the owner or the app itself; 403 for anyone else, 404 when there is no such app. */
  private async app(tenant: ResolvedInstance, caller: Caller, appId: string): Promise<AppRecord> {
    if (!isOwner(caller) && caller.claims.application !== appId) throw ApiError.forbidden();
    const app = await this.apps.find(tenant.instance.id, appId);
    if (!app?.setup) throw ApiError.notFound(`No application ${appId} is set up`);
    return app.record as AppRecord;
  }
}

function shown(webhook: Webhook) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    namespaces: webhook.namespaces,
    delivered: webhook.deliveredSeq,
    state: webhook.state,
    lastError: webhook.lastError,
    failingSince: webhook.failingSince?.toISOString() ?? null,
    createdAt: webhook.createdAt.toISOString(),
  };
}
