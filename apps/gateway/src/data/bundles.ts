// Bundles: the owner's named selections of tables with filters, and their values now.
import {
  NOT_A_DATE_CODES,
  postgresErrorCode,
  STATEMENT_TIMEOUT_CODE,
  type BundleRecord,
  type DataBundleRepository,
  type PropertySelection,
} from '@pds/db';
import { ApiError } from '@pds/http';
import { requireOwner, type Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';
import { BUNDLE_NAME, parseBundle, selections, type BundleStructure } from './bundle-input';
import { located, type RecordView } from './service';

export class BundleService {
  constructor(private readonly bundles: DataBundleRepository) {}

  async define(tenant: ResolvedInstance, caller: Caller, input: { name: string; body: unknown }): Promise<BundleStructure> {
    requireOwner(caller);
    const bundle = parseBundle(input.body);
    if (bundle.name !== input.name) throw ApiError.badRequest(`name: must equal the path's bundle name ${input.name}`);
    await this.save(tenant.instance.id, bundle);
    return bundle;
  }

  async structure(tenant: ResolvedInstance, caller: Caller, input: { name: string }): Promise<BundleStructure> {
    requireOwner(caller);
    return this.find(tenant.instance.id, input.name);
  }

  /** The bundle's records now: `{ property: records }`. */
  async values(tenant: ResolvedInstance, caller: Caller, input: { name: string }): Promise<Record<string, RecordView[]>> {
    requireOwner(caller);
    return this.evaluate(tenant.instance.id, await this.find(tenant.instance.id, input.name));
  }

  /** Stores a bundle under its name (a debit's setup saves the bundle it names). */
  save(instanceId: string, bundle: BundleStructure): Promise<unknown> {
    return this.bundles.save(instanceId, bundle.name, bundle.bundle);
  }

  /** The bundle stored under this name, or null. */
  async stored(instanceId: string, name: string): Promise<BundleStructure | null> {
    const stored = BUNDLE_NAME.test(name) ? await this.bundles.find(instanceId, name) : null;
    return stored && { name: stored.name, bundle: stored.query as BundleStructure['bundle'] };
  }

  private async find(instanceId: string, name: string): Promise<BundleStructure> {
    const stored = await this.stored(instanceId, name);
    if (!stored) throw ApiError.notFound(`Bundle ${name} not found`);
    return stored;
  }

  /** Each property's records now. */
  evaluate(instanceId: string, bundle: BundleStructure): Promise<Record<string, RecordView[]>> {
    return this.evaluateSelections(instanceId, selections(bundle));
  }

  /** Each selection's records now (a bundle's properties, or a combinator's one). */
  async evaluateSelections(instanceId: string, properties: [string, PropertySelection][]): Promise<Record<string, RecordView[]>> {
    const values = await this.bundles.evaluate(instanceId, properties).catch((error: unknown) => {
      const code = postgresErrorCode(error) ?? '';
      if (code === STATEMENT_TIMEOUT_CODE)
        throw ApiError.unavailable('The bundle took too long to evaluate; narrow its endpoints or filters');
      if (NOT_A_DATE_CODES.includes(code)) throw ApiError.badRequest('bundle: a date transformation met a stored value that is not a date');
      throw error;
    });
    return Object.fromEntries(Object.entries(values).map(([name, records]) => [name, records.map(bundleRecordView)]));
  }
}

function bundleRecordView(record: BundleRecord): RecordView {
  return { ...located(record), ...(record.links ? { links: record.links.map(located) } : {}) };
}
