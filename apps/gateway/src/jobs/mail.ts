// mail: sends a queued message, or turns a password-reset request into a link and a mail. The request
// answered the same whatever the address; here the address is compared with the owner's, and nothing
// is sent when it differs. A retried reset makes a new link (the mail of the failed attempt never left).
import type { Job } from 'bullmq';
import type { PasswordResetRepository, UserRepository } from '@pds/db';
import type { JobPayloads, QUEUE_NAMES } from '@pds/queue';
import type { Clock } from '@pds/tokens';
import { newResetToken, resetLink, RESET_LIFETIME_MS } from '../auth/reset-tokens';
import type { MailSender } from '../mail/smtp';
import { passwordResetMail } from '../mail/templates';

export interface MailDeps {
  /** None without SMTP_URL: every job fails (and is retried) with a message saying so. */
  sender: MailSender | undefined;
  users: UserRepository;
  resets: PasswordResetRepository;
  clock: Clock;
  /** The address of an instance's console (instanceUrl of @pds/config). */
  consoleUrl: (address: string) => string;
}

export type MailOutcome = { sent: boolean };

export function mailProcessor(deps: MailDeps) {
  return async (job: Pick<Job<JobPayloads[typeof QUEUE_NAMES.mail]>, 'data'>): Promise<MailOutcome> => {
    const { sender } = deps;
    if (!sender) throw new Error('SMTP_URL is not set: mail cannot be sent');
    const data = job.data;
    if (data.kind === 'message') {
      await sender.send(data.message);
      return { sent: true };
    }
    const owner = await deps.users.findOwner(data.instanceId);
    if (!owner?.email || owner.disabled || owner.email.toLowerCase() !== data.email.toLowerCase()) return { sent: false };
    const { token, hash } = newResetToken();
    await deps.resets.replace(data.instanceId, owner.id, hash, new Date(deps.clock().getTime() + RESET_LIFETIME_MS));
    await sender.send(passwordResetMail({ to: owner.email, address: data.address, link: resetLink(deps.consoleUrl(data.address), token) }));
    return { sent: true };
  };
}
