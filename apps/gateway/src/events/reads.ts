// The reads the owner's activity log keeps (file content served, records read, debit values read, log-ins,
// app tokens issued), written without slowing the read: noted in memory, written in one statement per
// interval. Identical reads within an interval (same instance, account, object and client address) are
// one entry that counts them (`times`; records read add up in the object's `count`): an app reading the
// same file a thousand times a second costs one row, and the owner reads "120 records of fitness/steps"
// rather than 120 lines. The entries waiting are bounded: past `max` of them (the database slow or away)
// new ones are dropped and counted in the log, rather than holding memory without end or making readers
// wait.
import type { Actor, EventRepository, ReadEntry } from '@pds/db';
import type { Logger } from '@pds/runtime';

/** What a route declares of a read it served (route.ts `read`). */
export interface ReadNote {
  type: string;
  object: Record<string, unknown>;
  /** Records read: added up over the reads an entry stands for, and kept as the object's `count`. */
  count?: number;
  /** Who read, when the request's caller is not it (a log-in names the account logging in). */
  actor?: Pick<Actor, 'kind' | 'id'>;
}

export interface ReadLogOptions {
  intervalMs?: number;
  max?: number;
}

export class ReadLog {
  private waiting = new Map<string, ReadEntry>();
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
    const who = read.actor ?? actor;
    const address = actor.address ?? null;
    const key = `${instanceId}\n${read.type}\n${who.kind}\n${who.id ?? ''}\n${address ?? ''}\n${JSON.stringify(read.object)}`;
    // The same read again within the interval (the common case under load) allocates nothing.
    const same = this.waiting.get(key);
    if (same) return merge(same, 1, read.count);
    if (this.waiting.size >= this.options.max) {
      this.dropped += 1;
      return;
    }
    this.waiting.set(key, {
      instanceId,
      type: read.type,
      actorKind: who.kind,
      actorId: who.id ?? null,
      object: read.count === undefined ? read.object : { ...read.object, count: read.count },
      address,
      at: new Date(),
      times: 1,
    });
  }

  /** Writes what is waiting; one write at a time, entries noted meanwhile wait for the next. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.waiting.size === 0) return;
      const batch = this.waiting;
      this.waiting = new Map();
      if (this.dropped > 0) {
        this.logger.warn({ dropped: this.dropped }, 'activity log: reads dropped while too many waited');
        this.dropped = 0;
      }
      try {
        await this.events.addReads([...batch.values()]);
      } catch (error) {
        // Kept for the next interval while there is room: a short outage loses nothing.
        for (const [key, entry] of batch) {
          const same = this.waiting.get(key);
          if (same) {
            merge(same, entry.times, entry.object.count as number | undefined);
            if (entry.at < same.at) same.at = entry.at;
          } else if (this.waiting.size < this.options.max) this.waiting.set(key, entry);
        }
        this.logger.warn({ err: error, waiting: this.waiting.size }, 'activity log: writing reads failed; retried next interval');
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

/** Counts `times` more reads into an entry, and the records they read into its `count`. */
function merge(entry: ReadEntry, times: number, count: number | undefined): void {
  entry.times += times;
  if (count !== undefined) entry.object.count = (entry.object.count as number) + count;
}
