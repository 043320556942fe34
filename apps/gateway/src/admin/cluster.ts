// The operator's view of the cluster as a whole: which gateways and workers run (their presence in
// Redis), the gateway worker's queues with their failed jobs (inspect one, retry it), what is stored, and
// where the instances' registration with dex stands.
import type { InstanceAdminRepository, UsageRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import type { JobDetails, JobSummary, ProcessPresence, QueueInspector, QueueSummary } from '@pds/queue';

export interface ClusterOverview {
  processes: ProcessPresence[];
  queues: QueueSummary[];
  storage: { store: string; files: number; fileBytes: number; records: number; recordBytes: number; databaseBytes: number };
  dex: Awaited<ReturnType<InstanceAdminRepository['dexRegistration']>>;
}

/** How many instances not (yet) registered with dex the overview names. */
const DEX_WAITING_SHOWN = 50;

export class ClusterService {
  constructor(
    private readonly instances: InstanceAdminRepository,
    private readonly usage: UsageRepository,
    private readonly queues: QueueInspector,
    private readonly processes: () => Promise<ProcessPresence[]>,
    /** STORAGE: `local` or `s3`. */
    private readonly store: string,
  ) {}

  async overview(): Promise<ClusterOverview> {
    const [processes, queues, totals, databaseBytes, dex] = await Promise.all([
      this.processes(),
      this.queues.summaries(),
      this.usage.totals(),
      this.instances.databaseBytes(),
      this.instances.dexRegistration(DEX_WAITING_SHOWN),
    ]);
    const { files, fileBytes, records, recordBytes } = totals;
    return { processes, queues, storage: { store: this.store, files, fileBytes, records, recordBytes, databaseBytes }, dex };
  }

  async failed(queue: string, skip: number, take: number): Promise<{ total: number; jobs: JobSummary[] }> {
    const page = await this.queues.failed(queue, skip, take);
    if (!page) throw unknownQueue(queue, this.queues.names);
    return page;
  }

  async job(queue: string, id: string): Promise<JobDetails> {
    if (!this.queues.names.includes(queue)) throw unknownQueue(queue, this.queues.names);
    const job = await this.queues.job(queue, id);
    if (!job) throw ApiError.notFound(`There is no job ${id} in ${queue}`);
    return job;
  }

  /** Runs a failed job again (or one waiting out its backoff, now); the job as it then is. */
  async retry(queue: string, id: string): Promise<JobDetails> {
    if (!this.queues.names.includes(queue)) throw unknownQueue(queue, this.queues.names);
    const outcome = await this.queues.retry(queue, id);
    if (outcome === null) throw ApiError.notFound(`There is no job ${id} in ${queue}`);
    if (outcome === 'not-retryable')
      throw ApiError.conflict(`Job ${id} of ${queue} has not failed: only a failed job (or one waiting to retry) is retried`);
    return this.job(queue, id);
  }
}

const unknownQueue = (queue: string, names: string[]) =>
  ApiError.notFound(`There is no queue ${queue}; the queues are ${names.join(', ')}`);

/** What of a gateway job's payload the operator sees: a mail's addressee and subject, never its text or links. */
export function showGatewayJob(queue: string, data: unknown): unknown {
  if (queue !== 'mail' || typeof data !== 'object' || data === null) return data;
  const job = data as { kind?: string; message?: { to?: string; subject?: string }; address?: string; email?: string };
  return job.kind === 'message'
    ? { kind: job.kind, to: job.message?.to, subject: job.message?.subject }
    : { kind: job.kind, address: job.address, email: job.email };
}
