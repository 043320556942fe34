// The data tables: JSON records under namespace/endpoint, each access decided by access.ts first.
import {
  QuotaExceeded,
  type ChangeCheck,
  type DataChangeRepository,
  type DataRecordRepository,
  type LocatedRecord,
  type RecordQuery,
} from '@pds/db';
import { ApiError } from '@pds/http';
import type { Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';
import type { DataAccessPolicy } from './access';
import { parseBatch, parseRecords, parseUpdates, type Table } from './input';

/**
 * A record as the original system's clients read it: `endpoint` is `namespace/endpoint` (the
 * original's `ApiRecord` names the full path there, and hat-js clients compare against it).
 */
/** Records as a JSON list's text (RecordView's), and how many. */
export interface RecordList {
  json: string;
  count: number;
}

export interface RecordView {
  endpoint: string;
  recordId: string;
  data: unknown;
  links?: RecordView[];
}

// The original's texts for records an id call cannot reach (missing, or written by someone else).
const MISSING = {
  update: 'Could not update records: Records missing for updating',
  delete: 'Could not delete records: Records missing for deleting',
  link: 'Could not link records: Records missing for linking',
  get: 'Could not find unique record: No single record found for provided ID',
};

/** A write past the instance's records quota: 413, and nothing was stored (the statement wrote no row). */
async function withinQuota<T>(write: Promise<T>): Promise<T> {
  return write.catch((error: unknown) => {
    if (error instanceof QuotaExceeded) throw ApiError.tooLarge(`${error.message}: the records were not stored`);
    throw error;
  });
}

export class DataService {
  constructor(
    private readonly records: DataRecordRepository,
    private readonly changes: DataChangeRepository,
    private readonly access: DataAccessPolicy,
  ) {}

  async list(tenant: ResolvedInstance, caller: Caller, input: { table: Table; query: RecordQuery }): Promise<RecordList> {
    const { table } = input;
    await this.access.require(tenant.instance.id, caller, 'read', table);
    const rows = await this.records.findJson(tenant.instance.id, table.namespace, table.endpoint, input.query);
    const endpoint = endpointJson(table);
    return { json: `[${rows.map((row) => recordJsonText(endpoint, row.recordId, row.data)).join(',')}]`, count: rows.length };
  }

  /** How many records a table holds, for a caller who may read it (the rules of `list`). */
  async count(tenant: ResolvedInstance, caller: Caller, { table }: { table: Table }): Promise<{ count: number }> {
    await this.access.require(tenant.instance.id, caller, 'read', table);
    return { count: await this.records.count(tenant.instance.id, table.namespace, table.endpoint) };
  }

  /**
   * Stores all records of the body or none (`skipErrors`: the valid ones); the body is judged once the
   * caller may write. `single`: the body was one record, not a list.
   */
  async create(
    tenant: ResolvedInstance,
    caller: Caller,
    input: { table: Table; body: unknown; skipErrors: boolean },
  ): Promise<{ saved: string[]; single: boolean }> {
    const { table } = input;
    const writer = await this.access.require(tenant.instance.id, caller, 'write', table);
    const { records, single } = parseRecords(input.body, input.skipErrors);
    if (records.length === 0) return { saved: [], single };
    const saved = await withinQuota(
      this.records.insert(tenant.instance.id, writer.user.id, table.namespace, table.endpoint, records, caller.actor),
    );
    const endpoint = endpointJson(table);
    return { saved: saved.map((record) => recordJsonText(endpoint, record.recordId, record.json)), single };
  }

  /** Removes every record of the table, whoever wrote it; the number removed. */
  async deleteAll(tenant: ResolvedInstance, caller: Caller, input: { table: Table }): Promise<number> {
    await this.access.require(tenant.instance.id, caller, 'write', input.table);
    return this.records.deleteEndpoint(tenant.instance.id, input.table.namespace, input.table.endpoint, caller.actor);
  }

  /** Records across tables, with linked records, in one transaction; every table needs write. */
  async batch(tenant: ResolvedInstance, caller: Caller, input: { body: unknown }): Promise<RecordList> {
    const items = parseBatch(input.body);
    const tables = items.flatMap((item) => [item.table, ...item.links.map((link) => link.table)]);
    const writer = await this.access.requireAll(tenant.instance.id, caller, 'write', tables);
    const saved = await withinQuota(this.changes.insertBatch(tenant.instance.id, writer.user.id, items, caller.actor));
    const texts = saved.map((record) => {
      const links = record.links.map((link) => recordJsonText(endpointJson(link), link.recordId, link.json));
      return recordJsonText(endpointJson(record), record.recordId, record.json, `[${links.join(',')}]`);
    });
    return { json: `[${texts.join(',')}]`, count: texts.length };
  }

  /** One record by id, with the records linked to it: only a record the caller reaches by id. */
  async get(tenant: ResolvedInstance, caller: Caller, input: { recordId: string }): Promise<RecordView> {
    const instanceId = tenant.instance.id;
    const [record] = await this.changes.find(instanceId, [input.recordId]);
    if (!record || !this.access.reachesById(caller, record)) throw ApiError.badRequest(MISSING.get);
    const links = (await this.changes.linksOf(instanceId, [input.recordId])).get(input.recordId) ?? [];
    return withLinks(record, links);
  }

  /** Replaces the data of the caller's records, all or none. */
  async update(tenant: ResolvedInstance, caller: Caller, input: { body: unknown }): Promise<RecordView[]> {
    const updates = parseUpdates(input.body);
    const check = await this.changeCheck(tenant.instance.id, caller, updates.length, MISSING.update);
    const updated = await withinQuota(this.changes.update(tenant.instance.id, updates, check, caller.actor));
    return updated.map(located);
  }

  /** Removes the caller's records, all or none; the number removed. */
  async remove(tenant: ResolvedInstance, caller: Caller, input: { recordIds: string[] }): Promise<number> {
    const check = await this.changeCheck(tenant.instance.id, caller, input.recordIds.length, MISSING.delete);
    return this.changes.remove(tenant.instance.id, input.recordIds, check, caller.actor);
  }

  /** Links the caller's records with each other (POST /data-link). */
  async link(tenant: ResolvedInstance, caller: Caller, input: { recordIds: string[] }): Promise<void> {
    if (input.recordIds.length < 2) throw ApiError.badRequest('records: name at least two records to link');
    const check = await this.changeCheck(tenant.instance.id, caller, input.recordIds.length, MISSING.link);
    await this.changes.group(tenant.instance.id, input.recordIds, check);
  }

  /** namespace → endpoints holding records; the owner's. */
  async sources(tenant: ResolvedInstance, caller: Caller): Promise<Record<string, string[]>> {
    this.access.requireOwner(caller);
    return this.changes.sources(tenant.instance.id);
  }

  /**
   * The check of a change by id, run on the locked records: every record named must exist and be the
   * caller's (400 otherwise, as the original), and the caller must still write where they are (403).
   */
  private async changeCheck(instanceId: string, caller: Caller, expected: number, missing: string): Promise<ChangeCheck> {
    const mayWrite = await this.access.judge(instanceId, caller);
    return (found) => {
      if (found.length !== expected || !found.every((record) => this.access.reachesById(caller, record)))
        throw ApiError.badRequest(missing);
      mayWrite('write', found);
    };
  }
}

/** A table's `namespace/endpoint` as a JSON string. */
const endpointJson = (table: { namespace: string; endpoint: string }) => JSON.stringify(`${table.namespace}/${table.endpoint}`);

/**
 * A RecordView's JSON text, its data the JSON text the record was stored as or read back as: a record
 * is never parsed or printed again only to be answered. `links`: the JSON list of its linked records.
 */
function recordJsonText(endpoint: string, recordId: string, data: string, links?: string): string {
  return `{"endpoint":${endpoint},"recordId":"${recordId}","data":${data}${links === undefined ? '' : `,"links":${links}`}}`;
}

export const located = (record: LocatedRecord): RecordView => ({
  endpoint: `${record.namespace}/${record.endpoint}`,
  recordId: record.recordId,
  data: record.data,
});

/** A record and the records linked to it, as answered (named fields: a spread would cost per record, serve.ts). */
const withLinks = (record: LocatedRecord, links: LocatedRecord[]): RecordView => ({
  endpoint: `${record.namespace}/${record.endpoint}`,
  recordId: record.recordId,
  data: record.data,
  links: links.map(located),
});
