// Closing an instance (the owner's right to erasure, issue 19). The owner, re-entering their password,
// or the operator, giving a reason, moves the instance to `closing` with a grace date
// (INSTANCE_CLOSE_GRACE_DAYS). From the next request on every gateway (the instance entry is
// invalidated), every call answers 410 but the owner's closing flow (state.ts): log in, read the state,
// cancel. Once the grace date has passed, the purge job (jobs/instance-purge.ts) erases it; no state
// change applies any more from then (InstanceAdminRepository.changeState).
import type { InstanceAdminRepository, InstanceState, UserRepository } from '@pds/db';
import { ApiError, type RateLimit, limitedAddress } from '@pds/http';
import { type Clock, verifyPassword } from '@pds/tokens';
import { requireOwner, type Caller } from '../context';
import type { InstanceRegistry, ResolvedInstance } from './registry';

const DAY_MS = 24 * 3600 * 1000;

/** What the owner (and the console) sees of the closing. */
export interface CloseState {
  state: InstanceState;
  /** While closing: when the instance is erased; cancelling is possible until then. */
  closeAfter?: Date;
}

export interface ClosingDeps {
  instances: InstanceAdminRepository;
  registry: InstanceRegistry;
  users: UserRepository;
  /** The log-in limit: a re-entered password is guessed no faster than a log-in's. */
  passwordLimit: RateLimit;
  clock: Clock;
  graceDays: number;
}

export class ClosingService {
  constructor(private readonly deps: ClosingDeps) {}

  /** The owner closes their instance; 403 for a wrong password (nothing changes). */
  async close(tenant: ResolvedInstance, caller: Caller, input: { password: string }, client: { ip: string }): Promise<CloseState> {
    requireOwner(caller);
    await this.deps.passwordLimit.consume(`${tenant.instance.id}:${limitedAddress(client.ip)}`);
    const owner = await this.deps.users.findById(tenant.instance.id, caller.user.id);
    if (!owner?.passwordHash || !(await verifyPassword(input.password, owner.passwordHash)))
      throw ApiError.forbidden('The password is not right: the instance stays open');
    return this.start(tenant.instance.address, ['active'], 'owner', 'closed by its owner');
  }

  /** The operator (`actor`: `operator:<name>` or `operator`) closes an instance, active or suspended, with the same grace period; 404, or 409 when already closing. */
  operatorClose(address: string, reason: string, actor = 'operator'): Promise<CloseState> {
    return this.start(address, ['active', 'suspended'], actor, reason);
  }

  /**
   * The owner stops the closing before the grace date: the instance is what it was before, with the
   * tokens issued before — active, or suspended when the operator closed a suspended instance (a
   * cancel must not lift a suspension).
   */
  async cancel(tenant: ResolvedInstance, caller: Caller): Promise<CloseState> {
    requireOwner(caller);
    const { address, id } = tenant.instance;
    const [closing, before] = await this.deps.instances.history(id);
    const state = closing?.state === 'closing' && before?.state === 'suspended' ? 'suspended' : 'active';
    const at = this.deps.clock();
    const result = await this.deps.instances.changeState(address, ['closing'], {
      state,
      reason: 'closing cancelled by its owner',
      actor: 'owner',
      at,
    });
    if (!result.changed) throw ApiError.conflict(`The instance ${address} is not closing, or its grace period has ended`);
    await this.deps.registry.changed(address);
    return { state };
  }

  async status(tenant: ResolvedInstance, caller: Caller): Promise<CloseState> {
    requireOwner(caller);
    const found = await this.deps.instances.find(tenant.instance.address);
    if (!found) throw ApiError.notFound(`There is no instance at ${tenant.instance.address}`);
    return found.closeAfter ? { state: found.state, closeAfter: found.closeAfter } : { state: found.state };
  }

  private async start(address: string, from: InstanceState[], actor: string, reason: string): Promise<CloseState> {
    const at = this.deps.clock();
    const closeAfter = new Date(at.getTime() + this.deps.graceDays * DAY_MS);
    const result = await this.deps.instances.changeState(address, from, { state: 'closing', reason, actor, at }, closeAfter);
    if (!result.changed) {
      if (result.state === null) throw ApiError.notFound(`There is no instance at ${address}`);
      throw ApiError.conflict(`The instance ${address} is ${result.state}: it cannot be closed now`);
    }
    // Every gateway refuses the instance's tokens from its next request.
    await this.deps.registry.changed(address);
    return { state: 'closing', closeAfter };
  }
}
