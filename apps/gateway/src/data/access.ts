// Every data permission decision, in one place: who may read or write which table.
//   - the owner (own login token) reaches every table;
//   - any other account (an app's or a plain user's) reaches what its DataGrant rows say. An app's
//     rows are written at setup: write and read on its own namespace, read on what its record declares
//     (apps/service.ts grantsFor), so an app writes only its namespace;
//   - no token: 401. Write covers POST and DELETE; it does not imply read, as in the original.
import type { DataAccess, DataGrant, DataGrantRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { isOwner, type Caller } from '../context';
import type { Table } from './input';

/** A grant's endpoint covers that endpoint and the ones below it (`feed` covers `feed/likes`); "*" covers all. */
export function covers(grant: Pick<DataGrant, 'namespace' | 'endpoint' | 'access'>, access: DataAccess, table: Table): boolean {
  if (grant.access !== access || grant.namespace !== table.namespace) return false;
  return grant.endpoint === '*' || grant.endpoint === table.endpoint || table.endpoint.startsWith(`${grant.endpoint}/`);
}

export class DataAccessPolicy {
  constructor(private readonly grants: DataGrantRepository) {}

  /** Returns when the caller may; throws 401 without a caller, 403 when it may not. */
  async require(instanceId: string, caller: Caller | undefined, access: DataAccess, table: Table): Promise<void> {
    if (!caller) throw ApiError.notAuthenticated();
    if (isOwner(caller)) return;
    const grants = await this.grants.listFor(instanceId, caller.user.id);
    if (grants.some((grant) => covers(grant, access, table))) return;
    throw ApiError.forbidden(`No ${access} access to data ${table.namespace}/${table.endpoint}`);
  }
}
