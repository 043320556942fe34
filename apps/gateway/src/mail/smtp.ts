// The SMTP adapter of the mail port (nodemailer): SMTP_URL names the relay, MAIL_FROM the sender.
import nodemailer from 'nodemailer';
import type { MailMessage } from '@pds/queue';

export interface MailSender {
  /** Resolves once the relay accepted the message; throws (and the job is retried) otherwise. */
  send(message: MailMessage): Promise<void>;
  close(): void;
}

export function mailFrom(config: { MAIL_FROM?: string; CLUSTER_DOMAIN: string }): string {
  return config.MAIL_FROM ?? `PDS <no-reply@${config.CLUSTER_DOMAIN}>`;
}

/** smtp://user:pass@host:587 (STARTTLS when offered) or smtps://…:465 (TLS from the start). */
export function smtpSender(url: string, from: string): MailSender {
  const transport = nodemailer.createTransport(url);
  return {
    async send(message) {
      await transport.sendMail({ from, to: message.to, subject: message.subject, text: message.text, html: message.html });
    },
    close: () => transport.close(),
  };
}
