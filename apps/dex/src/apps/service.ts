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
    // An admin is the owner of a listed instance: its users and apps do not inherit the right.
    if (caller.accessScope !== 'owner' || !(await this.admins.isAdmin(caller.iss))) {
      throw ApiError.forbidden('Only a dex administrator may update applications');
    }
    const record = parseRecord(input.record);
    const cluster = parseCluster(input.cluster);
    if (typeof input.hatFilter !== 'string' || input.hatFilter === '')
      throw ApiError.badRequest('hatFilter: is required (an instance address or *)');
    if (!(await this.clusters.isCertified(cluster))) throw ApiError.notFound(`Unknown cluster ${cluster}`);
    const targets = input.hatFilter === '*' ? await this.instances.registeredIn(cluster) : [await this.target(input.hatFilter, cluster)];

    const stored = await this.apps.createVersion(record.id, record, caller.iss, targets);
    for (const push of stored.pushes) {
      await this.appPush.enqueue({ pushId: push.id, address: push.address, record, version: stored.version }, jobIds.appPush(push.id));
    }
    return { message: `Application ${record.id} version ${stored.version} queued for ${targets.length} instance(s)`, targets };
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

function parseRecord(body: unknown): AppRecord {
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
