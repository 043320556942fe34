// The data tables: JSON records under namespace/endpoint, each access decided by access.ts first.
import type { DataRecordRepository, RecordQuery, StoredRecord } from '@pds/db';
import type { Caller } from '../context';
import type { DataAccessPolicy } from './access';
import { parseRecords, type Table } from './input';

/**
 * A record as the original system's clients read it: `endpoint` is `namespace/endpoint` (the
 * original's `ApiRecord` names the full path there, and hat-js clients compare against it).
 */
export interface RecordView {
  endpoint: string;
  recordId: string;
  data: unknown;
}

export class DataService {
  constructor(
    private readonly records: DataRecordRepository,
    private readonly access: DataAccessPolicy,
  ) {}

  async list(instanceId: string, caller: Caller | undefined, table: Table, query: RecordQuery): Promise<RecordView[]> {
    await this.access.require(instanceId, caller, 'read', table);
    return (await this.records.find(instanceId, table.namespace, table.endpoint, query)).map(view(table));
  }

  /** Stores all records of the body or none; the body is judged only once the caller may write. */
  async create(instanceId: string, caller: Caller | undefined, table: Table, body: unknown): Promise<{ saved: RecordView[]; single: boolean }> {
    await this.access.require(instanceId, caller, 'write', table);
    const { records, single } = parseRecords(body);
    const saved = (await this.records.insert(instanceId, table.namespace, table.endpoint, records)).map(view(table));
    return { saved, single };
  }

  /** Removes every record of the table, whoever wrote it; the number removed. */
  async deleteAll(instanceId: string, caller: Caller | undefined, table: Table): Promise<number> {
    await this.access.require(instanceId, caller, 'write', table);
    return this.records.deleteEndpoint(instanceId, table.namespace, table.endpoint);
  }
}

const view =
  (table: Table) =>
  (record: StoredRecord): RecordView => ({ endpoint: `${table.namespace}/${table.endpoint}`, recordId: record.recordId, data: record.data });
