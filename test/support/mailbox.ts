// Mail for a test file: a real SMTP server (scripts/lib/smtp-catcher.ts, on a free port of this process)
// and the gateway worker's mail job over the test gateway's queue, sending to it with the gateway's
// clock. Tests read what arrived, as a person reads their mailbox. `stop()` in afterAll.
import type { Worker } from 'bullmq';
import { instanceUrl } from '@pds/config';
import { PasswordResetRepository, UserRepository } from '@pds/db';
import { createLogger } from '@pds/runtime';
import { blockingRedis, QUEUE_NAMES, runQueue } from '@pds/queue';
import { mailProcessor } from '../../apps/gateway/src/jobs/mail';
import { mailFrom, smtpSender } from '../../apps/gateway/src/mail/smtp';
import { startSmtpCatcher, type CaughtMail } from '../../scripts/lib/smtp-catcher';
import { eventually } from './eventually';
import { requireEnv, type TestGateway } from './gateway';

export interface Mailbox {
  messages: CaughtMail[];
  /** The next message to `to` not yet taken, waiting for it to arrive. */
  next(to: string): Promise<CaughtMail>;
  /** Messages to `to` that arrived and were not taken. */
  pending(to: string): CaughtMail[];
  stop(): Promise<void>;
}

export async function startMailbox(gw: TestGateway): Promise<Mailbox> {
  const catcher = await startSmtpCatcher();
  const sender = smtpSender(catcher.url, mailFrom(gw.config));
  const connection = blockingRedis({ url: requireEnv('TEST_REDIS_URL') });
  const worker: Worker = runQueue(
    QUEUE_NAMES.mail,
    mailProcessor({
      sender,
      users: new UserRepository(gw.db),
      resets: new PasswordResetRepository(gw.db),
      clock: gw.clock,
      consoleUrl: (address) => instanceUrl(gw.config, address),
    }),
    { connection, prefix: gw.redisPrefix },
    createLogger({ level: 'silent' }),
  );
  const taken = new Set<CaughtMail>();
  const pending = (to: string) => catcher.messages.filter((m) => !taken.has(m) && m.to.includes(to));
  return {
    messages: catcher.messages,
    pending,
    async next(to) {
      const mail = await eventually(async () => pending(to)[0]);
      taken.add(mail);
      return mail;
    },
    async stop() {
      await worker.close();
      connection.disconnect();
      sender.close();
      await catcher.stop();
    },
  };
}
