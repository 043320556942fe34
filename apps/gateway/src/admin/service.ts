// The operator's actions on instances: list and search them, read one with its record of state
// changes, set its quotas, suspend, resume and close it. A state change reaches every gateway through the
// instance cache's invalidation, so the pipeline refuses (or serves again) from the next request.
import type {
  InstanceAdminRepository,
  InstanceApp,
  InstanceOverview,
  PortabilityState,
  RecentEvent,
  InstanceSearch,
  InstanceState,
  QuotaDefaults,
  StateChange,
  UsageDrift,
  UsageRepository,
  UserKind,
} from '@pds/db';
import { ApiError } from '@pds/http';
import type { Clock } from '@pds/tokens';
import type { ClosingService } from '../instances/closing';
import type { InstanceRegistry } from '../instances/registry';

/** A quota change: a number of bytes, null for the cluster default, absent to leave it. */
export interface QuotaChange {
  bytes?: number | null;
  recordsBytes?: number | null;
}

export interface InstanceDetails extends InstanceOverview {
  history: StateChange[];
  accounts: Record<UserKind, number>;
  apps: InstanceApp[];
  recentEvents: RecentEvent[];
  portability: PortabilityState[];
}

/** How many of an instance's latest changes its page shows. */
const RECENT_EVENTS = 20;

export class AdminService {
  constructor(
    private readonly instances: InstanceAdminRepository,
    private readonly usage: UsageRepository,
    private readonly registry: InstanceRegistry,
    private readonly closing: ClosingService,
    readonly defaults: QuotaDefaults,
    private readonly clock: Clock,
  ) {}

  list(search: InstanceSearch): Promise<{ total: number; instances: InstanceOverview[] }> {
    return this.instances.list(search);
  }

  async get(address: string): Promise<InstanceDetails> {
    const instance = await this.find(address);
    const [history, accounts, apps, recentEvents, portability] = await Promise.all([
      this.instances.history(instance.id),
      this.instances.accounts(instance.id),
      this.instances.apps(instance.id),
      this.instances.recentEvents(instance.id, RECENT_EVENTS),
      this.instances.portability(instance.id),
    ]);
    return { ...instance, history, accounts, apps, recentEvents, portability };
  }

  async setQuota(address: string, change: QuotaChange): Promise<InstanceDetails> {
    const found = await this.instances.setQuota(address, { quotaBytes: change.bytes, quotaRecordsBytes: change.recordsBytes });
    if (!found) throw notFound(address);
    return this.get(address);
  }

  /** `actor`: who asked, as the instance's record of state changes names them (`operator:<name>`, `operator`). */
  suspend(address: string, reason: string, actor: string): Promise<InstanceDetails> {
    return this.change(address, ['active'], 'suspended', reason, actor);
  }

  resume(address: string, reason: string, actor: string): Promise<InstanceDetails> {
    return this.change(address, ['suspended'], 'active', reason, actor);
  }

  /** Recounts every instance's usage: the drift from what the statements kept (`usage verify`). */
  verifyUsage(): Promise<{ checked: number; drift: UsageDrift[] }> {
    return this.usage.verify();
  }

  /** The owner's closing flow, started by the operator: the same grace period, then the same purge. */
  async close(address: string, reason: string, actor: string): Promise<InstanceDetails> {
    await this.closing.operatorClose(address, reason, actor);
    return this.get(address);
  }

  private async change(address: string, from: InstanceState[], to: InstanceState, reason: string, actor: string): Promise<InstanceDetails> {
    const result = await this.instances.changeState(address, from, { state: to, reason, actor, at: this.clock() });
    if (!result.changed) {
      if (result.state === null) throw notFound(address);
      throw ApiError.conflict(`The instance ${address} is ${result.state}, not ${from.join(' or ')}: it cannot become ${to}`);
    }
    await this.registry.changed(address);
    return this.get(address);
  }

  private async find(address: string): Promise<InstanceOverview> {
    const instance = await this.instances.find(address);
    if (!instance) throw notFound(address);
    return instance;
  }
}

const notFound = (address: string) => ApiError.notFound(`There is no instance at ${address}`);
