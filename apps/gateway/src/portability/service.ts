// What the export and import routes do: the owner starts a job, reads its row, and gets signed addresses
// (a download once an export is ready, an upload for an import's archive). The work itself is the
// worker's (jobs/export-archive.ts, jobs/import-archive.ts).
import type { PortabilityJobRow, PortabilityRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { jobIds } from '@pds/queue';
import type { BlobStore } from '@pds/storage';
import type { Clock } from '@pds/tokens';
import type { ResolvedInstance } from '../instances/registry';
import { exportKey, importIdOf, importKey } from './keys';

/** Where the jobs are asked for (the gateway's producers of the two queues). */
export interface PortabilityQueues {
  exports: { enqueue(payload: { instanceId: string; address: string; id: string }, jobId: string): Promise<unknown> };
  imports: { enqueue(payload: { instanceId: string; address: string; id: string }, jobId: string): Promise<unknown> };
}

export interface PortabilityServiceDeps {
  repository: PortabilityRepository;
  store: BlobStore;
  queues: PortabilityQueues | undefined;
  clock: Clock;
  signedUrlTtl: number;
  importMaxBytes: number;
  baseUrl: (address: string) => string;
}

export interface ExportJson {
  exportId: string;
  status: 'running' | 'ready' | 'failed';
  bytes: number;
  files: number;
  records: number;
  progress: number;
  createdAt: string;
  downloadUrl?: string;
  expiresAt?: string;
  error?: string;
}

export interface ImportJson {
  importId: string;
  status: 'uploading' | 'running' | 'done' | 'failed';
  bytes: number;
  files: number;
  records: number;
  progress: number;
  createdAt: string;
  uploadUrl?: string;
  counts?: Record<string, number>;
  report?: { problem: string; path?: string; message: string };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NOT_EMPTY = 'This instance holds files or records: an archive can be imported into an empty instance only';

export class PortabilityService {
  constructor(private readonly deps: PortabilityServiceDeps) {}

  async startExport(tenant: ResolvedInstance): Promise<ExportJson> {
    const row = await this.deps.repository.startExport(tenant.instance.id, this.deps.clock());
    if (!row) throw ApiError.conflict('An export of this instance is running already');
    await this.enqueue('exports', tenant, row);
    return this.exportView(tenant, row);
  }

  async getExport(tenant: ResolvedInstance, exportId: string): Promise<ExportJson> {
    const row = await this.find(tenant, exportId, 'export');
    return this.exportView(tenant, row);
  }

  async listExports(tenant: ResolvedInstance): Promise<ExportJson[]> {
    const rows = await this.deps.repository.list(tenant.instance.id, 'export');
    return Promise.all(rows.map((row) => this.exportView(tenant, row)));
  }

  /** Step 1: a new import and the signed address its archive goes to; 409 unless the instance is empty. */
  async createImport(tenant: ResolvedInstance): Promise<ImportJson> {
    if (!(await this.deps.repository.isEmpty(tenant.instance.id))) throw ApiError.conflict(NOT_EMPTY);
    const row = await this.deps.repository.createImport(tenant.instance.id, this.deps.clock());
    const uploadUrl = await this.deps.store.presignPut(importKey(tenant.instance.address, row.id), this.signing(tenant));
    return { ...importView(row), uploadUrl };
  }

  /** Step 3: the archive is there; the restore job starts. Completing a running or finished import again answers it as it is. */
  async completeImport(tenant: ResolvedInstance, importId: string): Promise<ImportJson> {
    const row = await this.find(tenant, importId, 'import');
    if (row.status !== 'uploading') return importView(row);
    const key = importKey(tenant.instance.address, row.id);
    const size = await this.deps.store.stat(key);
    if (size === null) throw ApiError.conflict(`The archive of import ${importId} has not been uploaded`);
    if (size > this.deps.importMaxBytes) {
      await this.deps.store.remove(key);
      throw ApiError.tooLarge(`The archive is ${size} bytes, over the limit of ${this.deps.importMaxBytes}; it was removed`);
    }
    if (!(await this.deps.repository.isEmpty(tenant.instance.id))) throw ApiError.conflict(NOT_EMPTY);
    const started = await this.deps.repository.startImport(tenant.instance.id, row.id, size);
    if (started === 'conflict') throw ApiError.conflict('Another import into this instance is running');
    if (!started) return importView(await this.find(tenant, importId, 'import'));
    await this.enqueue('imports', tenant, started);
    return importView(started);
  }

  async getImport(tenant: ResolvedInstance, importId: string): Promise<ImportJson> {
    return importView(await this.find(tenant, importId, 'import'));
  }

  /** Whether a signed upload address for `key` may still take bytes: an import's, while it waits for them. */
  async acceptsUpload(tenant: ResolvedInstance, key: string): Promise<boolean> {
    const id = importIdOf(key);
    if (!id || !key.startsWith(`${tenant.instance.address}/`)) return false;
    const row = await this.deps.repository.find(tenant.instance.id, id, 'import');
    return row?.status === 'uploading';
  }

  private async find(tenant: ResolvedInstance, id: string, kind: 'export' | 'import'): Promise<PortabilityJobRow> {
    const row = UUID.test(id) ? await this.deps.repository.find(tenant.instance.id, id, kind) : null;
    if (!row) throw ApiError.notFound(`No ${kind} ${id}`);
    return row;
  }

  private async enqueue(queue: keyof PortabilityQueues, tenant: ResolvedInstance, row: PortabilityJobRow): Promise<void> {
    const producer = this.deps.queues?.[queue];
    const payload = { instanceId: tenant.instance.id, address: tenant.instance.address, id: row.id };
    const jobId = queue === 'exports' ? jobIds.exportArchive(row.id) : jobIds.importArchive(row.id);
    try {
      if (!producer) throw new Error('no job queue');
      await producer.enqueue(payload, jobId);
    } catch {
      // Without its job the row would say running for ever (and block the next start).
      await this.deps.repository.finish(tenant.instance.id, row.id, {
        status: 'failed',
        at: this.deps.clock(),
        result: { problem: 'unavailable', message: 'The job queue did not take the job' },
      });
      throw ApiError.unavailable('The job queue is unavailable; try again shortly');
    }
  }

  private async exportView(tenant: ResolvedInstance, row: PortabilityJobRow): Promise<ExportJson> {
    const view: ExportJson = {
      exportId: row.id,
      status: row.status as ExportJson['status'],
      bytes: Number(row.bytes),
      files: row.files,
      records: row.records,
      progress: row.progress,
      createdAt: row.createdAt.toISOString(),
    };
    if (row.status === 'failed') view.error = String((row.result as { message?: string } | null)?.message ?? 'The export failed');
    if (row.status === 'ready' && row.expiresAt) {
      view.expiresAt = row.expiresAt.toISOString();
      if (row.expiresAt > this.deps.clock()) {
        view.downloadUrl = await this.deps.store.presignGet(exportKey(tenant.instance.address, row.id), this.signing(tenant));
      }
    }
    return view;
  }

  private signing(tenant: ResolvedInstance) {
    return { ttlSeconds: this.deps.signedUrlTtl, baseUrl: this.deps.baseUrl(tenant.instance.address) };
  }
}

function importView(row: PortabilityJobRow): ImportJson {
  const view: ImportJson = {
    importId: row.id,
    status: row.status as ImportJson['status'],
    bytes: Number(row.bytes),
    files: row.files,
    records: row.records,
    progress: row.progress,
    createdAt: row.createdAt.toISOString(),
  };
  if (row.status === 'done' && row.result) view.counts = row.result as Record<string, number>;
  if (row.status === 'failed' && row.result) view.report = row.result as ImportJson['report'];
  return view;
}
