// A local SMTP server that keeps what it receives: `pnpm start` without SMTP_URL prints each message
// (so a reset link can be followed), and the tests read their mail from it. A real SMTP conversation
// over TCP (smtp-server), the message parsed as a mail client would (mailparser). Plain text on
// 127.0.0.1, no authentication: it is not a relay and sends nothing on.
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface CaughtMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
}

export interface SmtpCatcher {
  /** smtp://127.0.0.1:<port>, for SMTP_URL. */
  url: string;
  /** Everything received so far, oldest first. */
  messages: CaughtMail[];
  stop(): Promise<void>;
}

const addresses = (value: unknown): string[] => {
  const list = (Array.isArray(value) ? value : value ? [value] : []) as { value: { address?: string }[] }[];
  return list.flatMap((group) => group.value.map((a) => a.address ?? '')).filter(Boolean);
};

export async function startSmtpCatcher(options: { port?: number; onMail?: (mail: CaughtMail) => void } = {}): Promise<SmtpCatcher> {
  const messages: CaughtMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: 10 * 1024 * 1024,
    onData(stream, _session, done) {
      simpleParser(stream).then(
        (parsed) => {
          const mail: CaughtMail = {
            from: addresses(parsed.from)[0] ?? '',
            to: addresses(parsed.to),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
          };
          messages.push(mail);
          options.onMail?.(mail);
          done();
        },
        (error: Error) => done(error),
      );
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
