// The owner's grants of data tables to plain user accounts. Apps' permission sets come from their
// setup and are not edited here, so an app's write access stays its own namespace.
import type { DataGrant, DataGrantRepository, UserRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { requireOwner, type Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';

export interface GrantInput {
  userId: string;
  namespace: string;
  endpoint: string;
  access: 'read' | 'write';
}

const grantView = ({ userId, namespace, endpoint, access }: DataGrant) => ({ userId, namespace, endpoint, access });

export class DataGrantService {
  constructor(
    private readonly grants: DataGrantRepository,
    private readonly users: UserRepository,
  ) {}

  async list(tenant: ResolvedInstance, caller: Caller, input: { userId: string }) {
    requireOwner(caller);
    return (await this.grants.grants(tenant.instance.id, input.userId)).map(grantView);
  }

  async grant(tenant: ResolvedInstance, caller: Caller, input: GrantInput): Promise<GrantInput> {
    requireOwner(caller);
    const user = await this.users.findById(tenant.instance.id, input.userId);
    if (!user) throw ApiError.notFound(`User ${input.userId} not found`);
    if (user.kind !== 'user') throw ApiError.badRequest(`userId: data grants are for plain user accounts, not ${user.kind} accounts`);
    await this.grants.grant(tenant.instance.id, input);
    return input;
  }

  async revoke(tenant: ResolvedInstance, caller: Caller, input: GrantInput) {
    requireOwner(caller);
    if (!(await this.grants.revoke(tenant.instance.id, input))) throw ApiError.notFound('No such data grant');
    return { message: 'Data grant revoked', ...input };
  }
}
