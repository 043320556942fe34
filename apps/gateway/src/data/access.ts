// Every data permission decision, in one place: who may read or write which table.
//   - the owner (own login token) reaches every table;
//   - any other account (an app's or a plain user's) reaches what its DataGrant rows say. An app's
//     rows are written at setup: write and read on its own namespace, read on what its record declares
//     (apps/service.ts grantsFor), so an app writes only its namespace;
//   - no token: 401. Write covers POST and DELETE; it does not imply read, as in the original;
//   - by record id (read one, update, delete, link) an account reaches only the records it wrote, and
//     still needs write on each of their namespaces to change them; the owner reaches every record;
//   - the list of tables is the owner's; a data debit's values go to its holder (and the owner).
import type { DataAccess, DataGrant, OwnedRecord } from '@pds/db';
import { ApiError } from '@pds/http';
import { isOwner, type Caller } from '../context';
import type { Table } from './input';

/** A grant's endpoint covers that endpoint and the ones below it (`feed` covers `feed/likes`); "*" covers all. */
export function covers(grant: Pick<DataGrant, 'namespace' | 'endpoint' | 'access'>, access: DataAccess, table: Table): boolean {
  if (grant.access !== access || grant.namespace !== table.namespace) return false;
  return grant.endpoint === '*' || grant.endpoint === table.endpoint || table.endpoint.startsWith(`${grant.endpoint}/`);
}

/** An account's grants, as the gateway's account cache keeps them. */
export interface GrantSource {
  grants(instanceId: string, userId: string): Promise<DataGrant[]>;
}

export class DataAccessPolicy {
  constructor(private readonly grants: GrantSource) {}

  /** Returns the caller when it may; throws 401 without a caller, 403 when it may not. */
  async require(instanceId: string, caller: Caller | undefined, access: DataAccess, table: Table): Promise<Caller> {
    return this.requireAll(instanceId, caller, access, [table]);
  }

  /** As require, for every table at once (a batch, or the records of an update): all or nothing. */
  async requireAll(instanceId: string, caller: Caller | undefined, access: DataAccess, tables: Table[]): Promise<Caller> {
    (await this.judge(instanceId, caller))(access, tables);
    return caller as Caller;
  }

  /**
   * Reads the caller's grants once and returns the decision as a plain function, for checks made
   * inside a transaction: asking the database again there would hold a second pool connection.
   */
  async judge(instanceId: string, caller: Caller | undefined): Promise<(access: DataAccess, tables: Table[]) => void> {
    if (!caller) throw ApiError.notAuthenticated();
    if (isOwner(caller)) return () => undefined;
    const grants = await this.grants.grants(instanceId, caller.user.id);
    return (access, tables) => {
      const refused = tables.find((table) => !grants.some((grant) => covers(grant, access, table)));
      if (refused) throw ApiError.forbidden(`No ${access} access to data ${refused.namespace}/${refused.endpoint}`);
    };
  }

  /** Whether the caller reaches this record by its id: the owner any, others those they wrote. */
  reachesById(caller: Caller, record: Pick<OwnedRecord, 'userId'>): boolean {
    return isOwner(caller) || record.userId === caller.user.id;
  }

  /** Owner-only calls: the list of every table, bundles, and managing data debits. */
  requireOwner(caller: Caller | undefined): Caller {
    if (!caller) throw ApiError.notAuthenticated();
    if (!isOwner(caller)) throw ApiError.forbidden('Only the owner of this instance may do this');
    return caller;
  }

  /** A debit's values: its holder's, and the owner's (whose data it is); 403 for anyone else. */
  requireDebitReader(caller: Caller | undefined, holderId: string | null): Caller {
    if (!caller) throw ApiError.notAuthenticated();
    if (isOwner(caller) || (holderId !== null && holderId === caller.user.id)) return caller;
    throw ApiError.forbidden('Only the holder of this data debit may read its values');
  }
}
