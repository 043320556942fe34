// update-application: an administrator certifies an app record; dex stores it as a new version and
// queues one push per target instance (the worker delivers them).
import { parseAppRecord, type AppRecord } from '@pds/app-record';
import type { AdminRepository, AppRecordRepository, CertifiedClusterRepository, RegisteredInstanceRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { jobIds, type Producer } from '@pds/queue';
import { isDomainName, parseInstanceAddress } from '../address';
import type { InstanceTokenVerifier } from '../auth';

export interface UpdateRequest {
  token: string | undefined;
  hatFilter: unknown;
  cluster: unknown;
  body: unknown;
}

export class AppUpdateService {
  constructor(
    private readonly verifier: InstanceTokenVerifier,
    private readonly admins: AdminRepository,
    private readonly clusters: CertifiedClusterRepository,
    private readonly instances: RegisteredInstanceRepository,
    private readonly apps: AppRecordRepository,
    private readonly appPush: Producer<'app-push'>,
  ) {}

  async update(request: UpdateRequest): Promise<{ message: string; targets: string[] }> {
    const claims = await this.verifier.verify(request.token);
    // An admin is the owner of a listed instance: its users and apps do not inherit the right.
    if (claims.accessScope !== 'owner' || !(await this.admins.isAdmin(claims.iss))) {
      throw ApiError.forbidden('Only a dex administrator may update applications');
    }
    const record = parseRecord(request.body);
    const cluster = parseCluster(request.cluster);
    if (typeof request.hatFilter !== 'string' || request.hatFilter === '')
      throw ApiError.badRequest('hatFilter: is required (an instance address or *)');
    if (!(await this.clusters.isCertified(cluster))) throw ApiError.notFound(`Unknown cluster ${cluster}`);
    const targets =
      request.hatFilter === '*' ? await this.instances.registeredIn(cluster) : [await this.target(request.hatFilter, cluster)];

    const stored = await this.apps.createVersion(record.id, record, claims.iss, targets);
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
