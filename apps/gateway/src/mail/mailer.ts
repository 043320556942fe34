// The mail port. A feature hands over a message (or a password-reset request) and returns at once; the
// gateway worker sends it (jobs/mail.ts) over SMTP (smtp.ts), retried with backoff: never inside a request.
import { ApiError } from '@pds/http';
import { MAIL_JOB_OPTIONS, QueueUnavailableError, type MailJob, type MailMessage } from '@pds/queue';

/** Where mail jobs go (@pds/queue's mail producer). */
export interface MailQueue {
  add(job: MailJob, options: typeof MAIL_JOB_OPTIONS): Promise<void>;
}

export type { MailMessage };

export class Mailer {
  /** @param queue none in a gateway built without a mail queue: then every call answers 503 */
  constructor(private readonly queue: MailQueue | undefined) {}

  /** Queues a ready message (e.g. "your instance is closing"); 503 when the queue cannot take it. */
  enqueue(message: MailMessage): Promise<void> {
    return this.add({ kind: 'message', message });
  }

  /** Queues a reset request; the worker mails a link only when `email` is the owner's. */
  requestPasswordReset(request: { instanceId: string; address: string; email: string }): Promise<void> {
    return this.add({ kind: 'password-reset', ...request });
  }

  private async add(job: MailJob): Promise<void> {
    if (!this.queue) throw ApiError.unavailable('Mail is not configured on this gateway');
    try {
      await this.queue.add(job, MAIL_JOB_OPTIONS);
    } catch (error) {
      if (error instanceof QueueUnavailableError) throw ApiError.unavailable();
      throw error;
    }
  }
}
