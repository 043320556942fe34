// The data tables: JSON records under namespace/endpoint, each access decided by access.ts first.
import type { ChangeCheck, DataChangeRepository, DataRecordRepository, LocatedRecord, RecordQuery, StoredRecord } from '@pds/db';
import { ApiError } from '@pds/http';
import type { Caller } from '../context';
import type { DataAccessPolicy } from './access';
import { parseBatch, parseRecords, parseUpdates, type Table } from './input';

/**
 * A record as the original system's clients read it: `endpoint` is `namespace/endpoint` (the
 * original's `ApiRecord` names the full path there, and hat-js clients compare against it).
 */
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

export class DataService {
  constructor(
    private readonly records: DataRecordRepository,
    private readonly changes: DataChangeRepository,
    private readonly access: DataAccessPolicy,
  ) {}

  async list(instanceId: string, caller: Caller | undefined, table: Table, query: RecordQuery): Promise<RecordView[]> {
    await this.access.require(instanceId, caller, 'read', table);
    return (await this.records.find(instanceId, table.namespace, table.endpoint, query)).map(view(table));
  }

  /** Stores all records of the body or none (`skipErrors`: the valid ones); judged once the caller may write. */
  async create(
    instanceId: string,
    caller: Caller | undefined,
    table: Table,
    body: unknown,
    skipErrors = false,
  ): Promise<{ saved: RecordView[]; single: boolean }> {
    const writer = await this.access.require(instanceId, caller, 'write', table);
    const { records, single } = parseRecords(body, skipErrors);
    if (records.length === 0) return { saved: [], single };
    const saved = (await this.records.insert(instanceId, writer.user.id, table.namespace, table.endpoint, records)).map(view(table));
    return { saved, single };
  }

  /** Removes every record of the table, whoever wrote it; the number removed. */
  async deleteAll(instanceId: string, caller: Caller | undefined, table: Table): Promise<number> {
    await this.access.require(instanceId, caller, 'write', table);
    return this.records.deleteEndpoint(instanceId, table.namespace, table.endpoint);
  }

  /** Records across tables, with linked records, in one transaction; every table needs write. */
  async batch(instanceId: string, caller: Caller | undefined, body: unknown): Promise<RecordView[]> {
    if (!caller) throw ApiError.notAuthenticated();
    const items = parseBatch(body);
    const tables = items.flatMap((item) => [item.table, ...item.links.map((link) => link.table)]);
    const writer = await this.access.requireAll(instanceId, caller, 'write', tables);
    const row = ({ table, data }: { table: Table; data: object }) => ({ namespace: table.namespace, endpoint: table.endpoint, data });
    const saved = await this.changes.insertBatch(
      instanceId,
      writer.user.id,
      items.map((item) => ({ ...row(item), links: item.links.map(row) })),
    );
    return saved.map((record) => ({ ...located(record), links: record.links.map(located) }));
  }

  /** One record by id, with the records linked to it: only a record the caller reaches by id. */
  async get(instanceId: string, caller: Caller | undefined, recordId: string): Promise<RecordView> {
    if (!caller) throw ApiError.notAuthenticated();
    const [record] = await this.changes.find(instanceId, [recordId]);
    if (!record || !this.access.reachesById(caller, record)) throw ApiError.badRequest(MISSING.get);
    const links = (await this.changes.linksOf(instanceId, [recordId])).get(recordId) ?? [];
    return { ...located(record), links: links.map(located) };
  }

  /** Replaces the data of the caller's records, all or none. */
  async update(instanceId: string, caller: Caller | undefined, body: unknown): Promise<RecordView[]> {
    if (!caller) throw ApiError.notAuthenticated();
    const updates = parseUpdates(body);
    const check = await this.changeCheck(instanceId, caller, updates.length, MISSING.update);
    const updated = await this.changes.update(instanceId, updates, check);
    return updated.map(located);
  }

  /** Removes the caller's records, all or none; the number removed. */
  async remove(instanceId: string, caller: Caller | undefined, recordIds: string[]): Promise<number> {
    if (!caller) throw ApiError.notAuthenticated();
    return this.changes.remove(instanceId, recordIds, await this.changeCheck(instanceId, caller, recordIds.length, MISSING.delete));
  }

  /** Links the caller's records with each other (POST /data-link). */
  async link(instanceId: string, caller: Caller | undefined, recordIds: string[]): Promise<void> {
    if (!caller) throw ApiError.notAuthenticated();
    if (recordIds.length < 2) throw ApiError.badRequest('records: name at least two records to link');
    await this.changes.group(instanceId, recordIds, await this.changeCheck(instanceId, caller, recordIds.length, MISSING.link));
  }

  /** namespace → endpoints holding records; the owner's. */
  async sources(instanceId: string, caller: Caller | undefined): Promise<Record<string, string[]>> {
    this.access.requireOwner(caller);
    return this.changes.sources(instanceId);
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

const view =
  (table: Table) =>
  (record: StoredRecord): RecordView => ({
    endpoint: `${table.namespace}/${table.endpoint}`,
    recordId: record.recordId,
    data: record.data,
  });

export const located = (record: LocatedRecord): RecordView => view(record)(record);
