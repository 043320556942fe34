import type { Job } from 'bullmq';

/** True while the job runs its last allowed attempt: a failure now is final. */
export function isLastAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
