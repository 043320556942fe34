// Data debits: a debit offers a bundle to an account under terms the owner accepts, and the holder
// reads the bundle's records only while the terms are active.
import type { AppRecord } from '@pds/app-record';
import type { Actor, DataDebitRepository, DebitTerms, DebitWithPermissions, UserRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import type { Clock } from '@pds/tokens';
import type { DataAccessPolicy } from './access';
import { requireOwner, type Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';
import { APP_DEBIT_PERIOD_SECONDS, appBundle, appDebitKey } from './app-debit';
import type { BundleStructure } from './bundle-input';
import type { BundleService } from './bundles';
import { DEBIT_KEY, parseDebitSetup } from './debit-input';
import { debitView, type DebitView } from './debit-view';
import type { RecordView } from './service';

export class DebitService {
  constructor(
    private readonly bundles: BundleService,
    private readonly debits: DataDebitRepository,
    private readonly users: UserRepository,
    private readonly access: DataAccessPolicy,
    private readonly clock: Clock,
  ) {}

  async list(tenant: ResolvedInstance, caller: Caller): Promise<DebitView[]> {
    requireOwner(caller);
    const now = this.clock();
    return (await this.debits.list(tenant.instance.id)).map((d) => debitView(d, now));
  }

  /** A debit: the owner's, and its holder's. */
  async get(tenant: ResolvedInstance, caller: Caller, input: { key: string }): Promise<DebitView> {
    const debit = await this.find(tenant.instance.id, input.key);
    this.access.requireDebitReader(caller, debit.holderId);
    return this.view(debit);
  }

  /** A new debit (its bundle saved too), not accepted until the owner enables it; 400 when the key is taken. */
  async register(tenant: ResolvedInstance, caller: Caller, input: { key: string; body: unknown }): Promise<DebitView> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    const { key } = input;
    const { request, terms, bundle } = await parseDebitSetup(this.users, instanceId, key, input.body);
    // Checked before the bundle is saved, so a refused request leaves the bundles as they were.
    if (await this.debits.find(instanceId, key)) throw ApiError.badRequest(`Data Debit ${key} already exists`);
    await this.bundles.save(instanceId, bundle);
    const created = await this.debits.create(instanceId, key, request, terms);
    if (!created) throw ApiError.badRequest(`Data Debit ${key} already exists`);
    return this.view(created);
  }

  /** New terms for a debit; they replace the active ones once the owner enables them. */
  async update(tenant: ResolvedInstance, caller: Caller, input: { key: string; body: unknown }): Promise<DebitView> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    const { key } = input;
    const { request, terms, bundle } = await parseDebitSetup(this.users, instanceId, key, input.body);
    await this.find(instanceId, key);
    await this.bundles.save(instanceId, bundle);
    return this.view(found(key, await this.debits.addTerms(instanceId, key, terms, request)));
  }

  async enable(tenant: ResolvedInstance, caller: Caller, input: { key: string }): Promise<DebitView> {
    requireOwner(caller);
    await this.find(tenant.instance.id, input.key);
    return this.view(found(input.key, await this.debits.enable(tenant.instance.id, input.key, caller.actor)));
  }

  async disable(tenant: ResolvedInstance, caller: Caller, input: { key: string; atPeriodEnd: boolean }): Promise<DebitView> {
    requireOwner(caller);
    await this.find(tenant.instance.id, input.key);
    return this.view(
      found(input.key, await this.debits.cancel(tenant.instance.id, input.key, this.clock(), input.atPeriodEnd, caller.actor)),
    );
  }

  /** The bundle's records for the debit's holder (and the owner), only while the debit is active. */
  async values(tenant: ResolvedInstance, caller: Caller, input: { key: string }): Promise<{ bundle: Record<string, RecordView[]> }> {
    const debit = await this.find(tenant.instance.id, input.key);
    this.access.requireDebitReader(caller, debit.holderId);
    const active = this.view(debit).permissionsActive;
    if (!active) throw ApiError.badRequest(`Data Debit ${input.key} not enabled`);
    return { bundle: await this.bundles.evaluate(tenant.instance.id, active.bundle as BundleStructure) };
  }

  /** Whether a debit exists and is active (an app's `active` status needs it). */
  async isActive(instanceId: string, key: string): Promise<boolean> {
    const debit = await this.debits.find(instanceId, key);
    return debit !== null && this.view(debit).active;
  }

  /**
   * On app setup: the app's debit `app-<id>` with the bundle its record asks for, held by its account,
   * enabled with fresh terms whenever the bundle or holder changed or the debit is not active.
   */
  async enableAppDebit(instanceId: string, record: AppRecord, holderId: string, actor: Actor): Promise<void> {
    const bundle = appBundle(record);
    if (!bundle) return;
    const key = appDebitKey(record.id);
    await this.bundles.save(instanceId, bundle);
    const terms: DebitTerms = {
      purpose: record.description || record.title,
      start: this.clock(),
      period: APP_DEBIT_PERIOD_SECONDS,
      cancelAtPeriodEnd: false,
      termsUrl: record.url,
      bundleName: bundle.name,
    };
    const request = {
      requestClientName: record.title,
      requestClientUrl: record.url,
      requestClientLogoUrl: record.logoUrl,
      requestApplicationId: record.id,
      holderId,
    };
    const existing = await this.debits.find(instanceId, key);
    if (!existing) await this.debits.create(instanceId, key, request, terms);
    else await this.debits.addTerms(instanceId, key, terms, request);
    await this.debits.enable(instanceId, key, actor);
  }

  /** On app disable: its debit stops at once. */
  async disableAppDebit(instanceId: string, appId: string, actor: Actor): Promise<void> {
    await this.debits.cancel(instanceId, appDebitKey(appId), this.clock(), false, actor);
  }

  private async find(instanceId: string, key: string): Promise<DebitWithPermissions> {
    const debit = DEBIT_KEY.test(key) ? await this.debits.find(instanceId, key) : null;
    if (!debit) throw ApiError.notFound(`Data Debit ${key} not found`);
    return debit;
  }

  private view(debit: DebitWithPermissions): DebitView {
    return debitView(debit, this.clock());
  }
}

function found(key: string, debit: DebitWithPermissions | null): DebitWithPermissions {
  if (!debit) throw ApiError.notFound(`Data Debit ${key} not found`);
  return debit;
}
