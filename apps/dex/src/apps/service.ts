// update-application: an administrator certifies an app record; dex stores it as a new version and
// queues one push per target instance (the worker delivers them).
import { parseAppRecord, type AppRecord } from '@pds/app-record';
import type { AdminRepository, AppRecordRepository, CertifiedClusterRepository, RegisteredInstanceRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { jobIds, type Producer } from '@pds/queue';
import type { TokenClaims } from '@pds/tokens';
import { isDomainName, parseInstanceAddress } from '../address';

export interface UpdateInput {
  hatFilter: unknown;
  cluster: unknown;
  /** The app record to certify. */
  record: unknown;
}

/** Who receives a push: the registered instances of a cluster, narrowed to addresses or to those with the app set up. */
export interface PushSelection {
  cluster: string;
  /** These instances only (each must be registered in the cluster). */
  addresses?: string[];
  /** Only the instances whose last delivered push of the app said its owner has it set up. */
  setUp?: boolean;
}

export class AppUpdateService {
  constructor(
    private readonly admins: AdminRepository,
    private readonly clusters: CertifiedClusterRepository,
    private readonly instances: RegisteredInstanceRepository,
    private readonly apps: AppRecordRepository,
    private readonly appPush: Producer<'app-push'>,
  ) {}

  /** `caller`: the verified claims of the token the request came with (an instance's own). */
  async update(caller: TokenClaims, input: UpdateInput): Promise<{ message: string; targets: string[] }> {
    await this.requireAdmin(caller);
    const record = parseRecord(input.record);
    const cluster = parseCluster(input.cluster);
    if (typeof input.hatFilter !== 'string' || input.hatFilter === '')
      throw ApiError.badRequest('hatFilter: is required (an instance address or *)');
    const targets = await this.targets(input.hatFilter === '*' ? { cluster } : { cluster, addresses: [input.hatFilter] }, record.id);
    const stored = await this.push(record, caller.iss, targets);
    return { message: `Application ${record.id} version ${stored.version} queued for ${targets.length} instance(s)`, targets };
  }

  /** An admin is the owner of a listed instance: its users and apps do not inherit the right. */
  async requireAdmin(caller: Pick<TokenClaims, 'accessScope' | 'iss'>): Promise<void> {
    if (caller.accessScope !== 'owner' || !(await this.admins.isAdmin(caller.iss))) {
      throw ApiError.forbidden('Only a dex administrator may update applications');
    }
  }

  /** The instances a selection names, in address order: 404 for an unknown cluster or instance, 409 for one awaiting re-certification. */
  async targets(selection: PushSelection, appId: string): Promise<string[]> {
    const cluster = parseCluster(selection.cluster);
    if (!(await this.clusters.isCertified(cluster))) throw ApiError.notFound(`Unknown cluster ${cluster}`);
    let targets = selection.addresses?.length
      ? await Promise.all(selection.addresses.map((address) => this.target(address, cluster)))
      : await this.instances.registeredIn(cluster);
    if (selection.setUp) {
      const setUp = new Set(await this.apps.setUpAt(appId));
      targets = targets.filter((address) => setUp.has(address));
    }
    return [...new Set(targets)].sort();
  }

  /** Stores `record` as the app's next version and queues one push per target (the worker delivers them). */
  async push(record: AppRecord, by: string, targets: string[]): Promise<{ version: number; pushes: { id: string; address: string }[] }> {
    const stored = await this.apps.createVersion(record.id, record, by, targets);
    for (const push of stored.pushes) {
      await this.appPush.enqueue({ pushId: push.id, address: push.address, record, version: stored.version }, jobIds.appPush(push.id));
    }
    return stored;
  }

  private async target(hatFilter: string, cluster: string): Promise<string> {
    const { address } = parseInstanceAddress(hatFilter, 'hatFilter');
    const instance = await this.instances.find(address);
    if (!instance || instance.clusterDomain !== cluster || instance.state === 'pending') {
      throw ApiError.notFound(`No registered instance ${address} in cluster ${cluster}`);
    }
    if (instance.state === 'key_mismatch') throw ApiError.conflict(`${address} awaits re-certification after a key change`);
    return address;
  }
}

export function parseRecord(body: unknown): AppRecord {
  const result = parseAppRecord(body ?? {});
  if (result.success) return result.record;
  throw ApiError.badRequest(result.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : 'body'}: ${i.message}`).join('; '));
}

function parseCluster(raw: unknown): string {
  if (typeof raw !== 'string' || raw === '') throw ApiError.badRequest('cluster: is required');
  const cluster = raw.trim().toLowerCase();
  if (!isDomainName(cluster)) throw ApiError.badRequest('cluster: must be a domain name');
  return cluster;
}
