// Bundles and data debits: the owner defines bundles, a debit offers one to an account under terms the
// owner accepts, and the holder reads the bundle's records only while the terms are active.
import type { AppRecord } from '@pds/app-record';
import {
  NOT_A_DATE_CODES,
  postgresErrorCode,
  STATEMENT_TIMEOUT_CODE,
  type BundleRecord,
  type DataBundleRepository,
  type DataDebitRepository,
  type DebitPermission,
  type DebitTerms,
  type DebitWithPermissions,
  type UserRepository,
} from '@pds/db';
import { ApiError, parseInput } from '@pds/http';
import type { Clock } from '@pds/tokens';
import { z } from 'zod';
import type { DataAccessPolicy } from './access';
import { requireOwner, type Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';
import { BUNDLE_NAME, bundleSchema, parseBundle, selections, type BundleStructure, type PropertyQuery } from './bundle-input';
import { requireStorable } from './input';
import { located, type RecordView } from './service';

export const DEBIT_KEY = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;
/** What an app's debit runs for before it rolls on (the original used 30 days). */
export const APP_DEBIT_PERIOD_SECONDS = 30 * 24 * 3600;
const MAX_PERIOD_SECONDS = 10 * 365 * 24 * 3600;

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048);

/** The original's DataDebitSetupRequest (plus `holderUserId`: the plain user who may read the values). */
const setupSchema = z.object({
  dataDebitKey: z.string().optional(),
  purpose: z.string().min(1).max(4096),
  start: z.iso.datetime({ offset: true }),
  period: z.number().int().min(1).max(MAX_PERIOD_SECONDS),
  termsUrl: httpUrl,
  cancelAtPeriodEnd: z.boolean().default(false),
  requestClientName: z.string().min(1).max(256),
  requestClientUrl: httpUrl,
  requestClientLogoUrl: httpUrl,
  requestApplicationId: z.string().max(128).optional(),
  requestDescription: z.string().max(16_384).optional(),
  holderUserId: z.uuid().optional(),
  bundle: bundleSchema,
});

export interface PermissionView {
  dateCreated: string;
  purpose: string;
  start: string;
  period: number;
  cancelAtPeriodEnd: boolean;
  termsUrl: string;
  bundle: { name: string; bundle: unknown };
  canceledAt?: string;
  accepted: boolean;
  active: boolean;
  end?: string;
}

/** The original's DataDebit, as hat-js reads it. */
export interface DebitView {
  dataDebitKey: string;
  dateCreated: string;
  permissions: PermissionView[];
  requestClientName: string;
  requestClientUrl: string;
  requestClientLogoUrl: string;
  requestApplicationId?: string;
  requestDescription?: string;
  accepted: boolean;
  active: boolean;
  start?: string;
  end?: string;
  permissionsActive?: PermissionView;
  permissionsLatest?: PermissionView;
}

/**
 * When terms end: when cancelled; or, for terms that cancel at period end, at the end of the period
 * running when they were cancelled (the first period when set from the start). Otherwise they roll on.
 */
export function endOf(permission: Pick<DebitPermission, 'start' | 'period' | 'cancelAtPeriodEnd' | 'canceledAt'>): Date | undefined {
  if (!permission.cancelAtPeriodEnd) return permission.canceledAt ?? undefined;
  const periodMs = permission.period * 1000;
  const since = (permission.canceledAt ?? permission.start).getTime() - permission.start.getTime();
  return new Date(permission.start.getTime() + periodMs * Math.max(1, Math.ceil(since / periodMs)));
}

function permissionView(permission: DebitPermission, now: Date): PermissionView {
  const end = endOf(permission);
  return {
    dateCreated: permission.createdAt.toISOString(),
    purpose: permission.purpose,
    start: permission.start.toISOString(),
    period: permission.period,
    cancelAtPeriodEnd: permission.cancelAtPeriodEnd,
    termsUrl: permission.termsUrl,
    bundle: { name: permission.bundle.name, bundle: permission.bundle.query },
    ...(permission.canceledAt ? { canceledAt: permission.canceledAt.toISOString() } : {}),
    accepted: permission.accepted,
    active: permission.accepted && permission.start <= now && (!end || now < end),
    ...(end ? { end: end.toISOString() } : {}),
  };
}

export function debitView(debit: DebitWithPermissions, now: Date): DebitView {
  const permissions = debit.permissions.map((p) => permissionView(p, now));
  const latest = permissions.at(-1);
  const active = permissions.filter((p) => p.active).at(-1);
  return {
    dataDebitKey: debit.key,
    dateCreated: debit.createdAt.toISOString(),
    permissions,
    requestClientName: debit.requestClientName,
    requestClientUrl: debit.requestClientUrl,
    requestClientLogoUrl: debit.requestClientLogoUrl,
    ...(debit.requestApplicationId ? { requestApplicationId: debit.requestApplicationId } : {}),
    ...(debit.requestDescription ? { requestDescription: debit.requestDescription } : {}),
    accepted: latest?.accepted ?? false,
    active: active !== undefined,
    ...(active ? { start: active.start, ...(active.end ? { end: active.end } : {}) } : {}),
    ...(active ? { permissionsActive: active } : {}),
    ...(latest ? { permissionsLatest: latest } : {}),
  };
}

/** The bundle an app's record asks for: one property per path it reads (`namespace` or `namespace/endpoint`). */
export function appBundle(record: AppRecord): BundleStructure | null {
  if (record.dataRead.length === 0) return null;
  const bundle: Record<string, PropertyQuery> = {};
  for (const path of record.dataRead) bundle[path] = { endpoints: [{ endpoint: path }] };
  return { name: `app-${record.id}`, bundle };
}

export const appDebitKey = (appId: string): string => `app-${appId}`;

export class DebitService {
  constructor(
    private readonly bundles: DataBundleRepository,
    private readonly debits: DataDebitRepository,
    private readonly users: UserRepository,
    private readonly access: DataAccessPolicy,
    private readonly clock: Clock,
  ) {}

  async saveBundle(tenant: ResolvedInstance, caller: Caller, input: { name: string; body: unknown }): Promise<BundleStructure> {
    requireOwner(caller);
    const bundle = parseBundle(input.body);
    if (bundle.name !== input.name) throw ApiError.badRequest(`name: must equal the path's bundle name ${input.name}`);
    await this.bundles.save(tenant.instance.id, input.name, bundle.bundle);
    return bundle;
  }

  async bundleStructure(tenant: ResolvedInstance, caller: Caller, input: { name: string }): Promise<BundleStructure> {
    requireOwner(caller);
    return this.findBundle(tenant.instance.id, input.name);
  }

  /** The bundle's records now: `{ property: records }`. */
  async bundleValues(tenant: ResolvedInstance, caller: Caller, input: { name: string }): Promise<Record<string, RecordView[]>> {
    requireOwner(caller);
    return this.evaluate(tenant.instance.id, await this.findBundle(tenant.instance.id, input.name));
  }

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
    const { request, terms, bundle } = await this.parseSetup(instanceId, key, input.body);
    // Checked before the bundle is saved, so a refused request leaves the bundles as they were.
    if (await this.debits.find(instanceId, key)) throw ApiError.badRequest(`Data Debit ${key} already exists`);
    await this.bundles.save(instanceId, bundle.name, bundle.bundle);
    const created = await this.debits.create(instanceId, key, request, terms);
    if (!created) throw ApiError.badRequest(`Data Debit ${key} already exists`);
    return this.view(created);
  }

  /** New terms for a debit; they replace the active ones once the owner enables them. */
  async update(tenant: ResolvedInstance, caller: Caller, input: { key: string; body: unknown }): Promise<DebitView> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    const { key } = input;
    const { request, terms, bundle } = await this.parseSetup(instanceId, key, input.body);
    await this.find(instanceId, key);
    await this.bundles.save(instanceId, bundle.name, bundle.bundle);
    return this.view(found(key, await this.debits.addTerms(instanceId, key, terms, request)));
  }

  async enable(tenant: ResolvedInstance, caller: Caller, input: { key: string }): Promise<DebitView> {
    requireOwner(caller);
    await this.find(tenant.instance.id, input.key);
    return this.view(found(input.key, await this.debits.enable(tenant.instance.id, input.key)));
  }

  async disable(tenant: ResolvedInstance, caller: Caller, input: { key: string; atPeriodEnd: boolean }): Promise<DebitView> {
    requireOwner(caller);
    await this.find(tenant.instance.id, input.key);
    return this.view(found(input.key, await this.debits.cancel(tenant.instance.id, input.key, this.clock(), input.atPeriodEnd)));
  }

  /** The bundle's records for the debit's holder (and the owner), only while the debit is active. */
  async values(tenant: ResolvedInstance, caller: Caller, input: { key: string }): Promise<{ bundle: Record<string, RecordView[]> }> {
    const debit = await this.find(tenant.instance.id, input.key);
    this.access.requireDebitReader(caller, debit.holderId);
    const active = this.view(debit).permissionsActive;
    if (!active) throw ApiError.badRequest(`Data Debit ${input.key} not enabled`);
    return { bundle: await this.evaluate(tenant.instance.id, active.bundle as BundleStructure) };
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
  async enableAppDebit(instanceId: string, record: AppRecord, holderId: string): Promise<void> {
    const bundle = appBundle(record);
    if (!bundle) return;
    const key = appDebitKey(record.id);
    await this.bundles.save(instanceId, bundle.name, bundle.bundle);
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
    await this.debits.enable(instanceId, key);
  }

  /** On app disable: its debit stops at once. */
  async disableAppDebit(instanceId: string, appId: string): Promise<void> {
    await this.debits.cancel(instanceId, appDebitKey(appId), this.clock());
  }

  private async find(instanceId: string, key: string): Promise<DebitWithPermissions> {
    const debit = DEBIT_KEY.test(key) ? await this.debits.find(instanceId, key) : null;
    if (!debit) throw ApiError.notFound(`Data Debit ${key} not found`);
    return debit;
  }

  private view(debit: DebitWithPermissions): DebitView {
    return debitView(debit, this.clock());
  }

  private async findBundle(instanceId: string, name: string): Promise<BundleStructure> {
    const stored = BUNDLE_NAME.test(name) ? await this.bundles.find(instanceId, name) : null;
    if (!stored) throw ApiError.notFound(`Bundle ${name} not found`);
    return { name: stored.name, bundle: stored.query as BundleStructure['bundle'] };
  }

  private async evaluate(instanceId: string, bundle: BundleStructure): Promise<Record<string, RecordView[]>> {
    const values = await this.bundles.evaluate(instanceId, selections(bundle)).catch((error: unknown) => {
      const code = postgresErrorCode(error) ?? '';
      if (code === STATEMENT_TIMEOUT_CODE)
        throw ApiError.unavailable('The bundle took too long to evaluate; narrow its endpoints or filters');
      if (NOT_A_DATE_CODES.includes(code)) throw ApiError.badRequest('bundle: a date transformation met a stored value that is not a date');
      throw error;
    });
    return Object.fromEntries(Object.entries(values).map(([name, records]) => [name, records.map(bundleRecordView)]));
  }

  private async parseSetup(instanceId: string, key: string, input: unknown) {
    if (!DEBIT_KEY.test(key)) throw ApiError.badRequest('dataDebitKey: must be 1-128 of letters, digits, _ . and -');
    requireStorable(input, 'body');
    const setup = parseInput(setupSchema, input);
    if (setup.dataDebitKey !== undefined && setup.dataDebitKey !== key)
      throw ApiError.badRequest(`dataDebitKey: must equal the path's key ${key}`);
    // The holder is a plain user of this instance (apps hold the debits their setup creates).
    if (setup.holderUserId && (await this.users.findById(instanceId, setup.holderUserId))?.kind !== 'user') {
      throw ApiError.notFound(`User ${setup.holderUserId} not found`);
    }
    const request = {
      requestClientName: setup.requestClientName,
      requestClientUrl: setup.requestClientUrl,
      requestClientLogoUrl: setup.requestClientLogoUrl,
      ...(setup.requestApplicationId ? { requestApplicationId: setup.requestApplicationId } : {}),
      ...(setup.requestDescription ? { requestDescription: setup.requestDescription } : {}),
      ...(setup.holderUserId ? { holderId: setup.holderUserId } : {}),
    };
    const terms: DebitTerms = {
      purpose: setup.purpose,
      start: new Date(setup.start),
      period: setup.period,
      cancelAtPeriodEnd: setup.cancelAtPeriodEnd,
      termsUrl: setup.termsUrl,
      bundleName: setup.bundle.name,
    };
    return { request, terms, bundle: setup.bundle };
  }
}

function found(key: string, debit: DebitWithPermissions | null): DebitWithPermissions {
  if (!debit) throw ApiError.notFound(`Data Debit ${key} not found`);
  return debit;
}

function bundleRecordView(record: BundleRecord): RecordView {
  return { ...located(record), ...(record.links ? { links: record.links.map(located) } : {}) };
}
