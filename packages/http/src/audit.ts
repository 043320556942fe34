// The consoles' audit: a route that changes something declares what to record (its action, what it acted
// on, the input worth keeping), and the console's pipeline records it with who asked, from where and the
// status it was answered with, refusals included. Recorded after the answer is decided, so an action is
// never recorded as done before it is.
import type { Logger } from '@pds/runtime';
import { toApiError } from './middleware';
import type { Reply } from './routing/route';

/** What a route records; `target` and `details` read its parsed input (never a password or token). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface AuditNote<Input = any> {
  action: string;
  target?(input: Input): string | undefined;
  details?(input: Input): Record<string, unknown> | undefined;
}

export interface AuditEntryInput {
  at: Date;
  actor: string;
  action: string;
  target: string | null;
  details: Record<string, unknown> | null;
  client: string;
  status: number;
}

/** Where entries go (AuditRepository of @pds/db). */
export interface AuditSink {
  record(entry: AuditEntryInput): Promise<void>;
}

export class Audit {
  constructor(
    private readonly sink: AuditSink,
    private readonly clock: () => Date,
    private readonly logger: Logger,
  ) {}

  /** Runs `work` and records it as `note` says, with its status (the error's, when it throws). */
  async around<I>(note: AuditNote<I>, who: { actor: string; client: string }, input: I, work: () => Promise<Reply | undefined>) {
    let status = 200;
    try {
      const reply = await work();
      status = reply?.status ?? 200;
      return reply;
    } catch (error) {
      status = toApiError(error).status;
      throw error;
    } finally {
      await this.record({ action: note.action, target: note.target?.(input), details: note.details?.(input), status, ...who });
    }
  }

  /** Records one entry; a failure to record is logged, never turned into the action's answer (it is done). */
  async record(entry: {
    actor: string;
    client: string;
    action: string;
    status: number;
    target?: string;
    details?: Record<string, unknown>;
  }) {
    try {
      await this.sink.record({ ...entry, at: this.clock(), target: entry.target ?? null, details: entry.details ?? null });
    } catch (error) {
      this.logger.error({ err: error, action: entry.action, actor: entry.actor }, 'audit entry could not be recorded');
    }
  }
}
