// The reads the owner's activity log keeps (file content served, records read, debit values read, log-ins,
// app tokens issued), written without slowing the read: noted in memory, written in one statement per
// interval. The buffer is bounded: past `max` entries waiting (the database slow or away) new ones are
// dropped and counted in the log, rather than holding memory without end or making readers wait.
import type { Actor, EventRepository, ReadEntry } from '@pds/db';
import type { Logger } from '@pds/runtime';

/** What a route declares of a read it served (route.ts `read`). */
export interface ReadNote {
  type: string;
  object: Record<string, unknown>;
  /** Who read, when the request's caller is not it (a log-in names the account logging in). */
  actor?: Pick<Actor, 'kind' | 'id'>;
}

export interface ReadLogOptions {
  intervalMs?: number;
  max?: number;
}

export class ReadLog {
  private buffer: ReadEntry[] = [];
  private dropped = 0;
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: EventRepository,
    private readonly logger: Logger,
    private readonly options: Required<ReadLogOptions> = { intervalMs: 1000, max: 10_000 },
  ) {
    this.timer = setInterval(() => void this.flush(), options.intervalMs);
    this.timer.unref();
  }

  note(instanceId: string, actor: Actor, read: ReadNote): void {
    if (this.buffer.length >= this.options.max) {
      this.dropped += 1;
      return;
    }
    const who = read.actor ?? actor;
    this.buffer.push({
      instanceId,
      type: read.type,
      actorKind: who.kind,
      actorId: who.id ?? null,
      object: read.object,
      address: actor.address ?? null,
      at: new Date(),
    });
  }

  /** Writes what is waiting; one write at a time, entries noted meanwhile wait for the next. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const batch = this.buffer;
      if (batch.length === 0) return;
      this.buffer = [];
      if (this.dropped > 0) {
        this.logger.warn({ dropped: this.dropped }, 'activity log: reads dropped while the buffer was full');
        this.dropped = 0;
      }
      try {
        await this.events.addReads(batch);
      } catch (error) {
        // Kept for the next interval while there is room: a short outage loses nothing.
        this.buffer = [...batch, ...this.buffer].slice(0, this.options.max);
        this.logger.warn({ err: error, waiting: this.buffer.length }, 'activity log: writing reads failed; retried next interval');
      }
    });
    return this.flushing;
  }

  /** Stops the timer and writes what is left (at shutdown). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
