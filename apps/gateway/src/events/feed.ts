// Tells this gateway's open event streams that their instance has new events, whichever gateway (or
// worker) wrote them. Each tick, while a stream is open, it numbers the watched instances' new events
// (the numbering step, packages/db/src/events.ts; the worker numbers every instance's too, but a stream
// does not wait for it) and reads their counter rows, one indexed statement each for all streams of the
// process.
// Why not LISTEN/NOTIFY or Redis pub/sub: NOTIFY takes a cluster-wide lock at commit, which would
// serialise every change of every instance; a Redis message would have to be sent after each commit by
// every writer (gateways and jobs), and one lost in a crash would leave a stream silent. The counter is
// the truth, and the numbering step moves it; a tick of 200 ms delivers well within a second
// (docs/events.md has the measured figure).
import type { EventRepository } from '@pds/db';
import type { Logger } from '@pds/runtime';

type Wake = () => void;

export class EventFeed {
  private readonly watched = new Map<string, { last: number; wakes: Set<Wake> }>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(
    private readonly events: EventRepository,
    private readonly logger: Logger,
    private readonly tickMs = 200,
  ) {}

  /** Calls `wake` whenever the instance's last event number grows; returns what stops it. */
  watch(instanceId: string, wake: Wake): () => void {
    let entry = this.watched.get(instanceId);
    if (!entry) {
      entry = { last: -1, wakes: new Set() };
      this.watched.set(instanceId, entry);
    }
    entry.wakes.add(wake);
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.tickMs);
      // Open streams keep the process serving; the timer alone must not.
      this.timer.unref();
    }
    return () => {
      entry.wakes.delete(wake);
      if (entry.wakes.size === 0) this.watched.delete(instanceId);
      if (this.watched.size === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.watched.size === 0) return;
    this.ticking = true;
    try {
      const watched = [...this.watched.keys()];
      await this.events.numberPending(watched);
      const last = await this.events.lastOf(watched);
      for (const [instanceId, entry] of this.watched) {
        const now = last.get(instanceId) ?? 0;
        if (now <= entry.last) continue;
        entry.last = now;
        for (const wake of entry.wakes) wake();
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'event feed: numbering or reading the counters failed; the next tick tries again');
    } finally {
      this.ticking = false;
    }
  }
}
