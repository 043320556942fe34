// Below HTTP a service takes (tenant, caller, input). These are the tenant and the callers that a
// request would carry, found as the pipeline finds them: the instance by its address in the registry,
// then the account behind a real token.
import type { TestGateway } from '../../../test/support/gateway';
import type { Caller } from '../src/context';
import type { ResolvedInstance } from '../src/instances/registry';

export async function tenantAt(gw: TestGateway, address: string): Promise<ResolvedInstance> {
  const tenant = await gw.registry.resolve(address);
  if (!tenant) throw new Error(`no instance at ${address}`);
  return tenant;
}

export function callerWith(gw: TestGateway, tenant: ResolvedInstance, who: { token: string }): Promise<Caller> {
  return gw.auth.authenticate(tenant, who.token);
}
