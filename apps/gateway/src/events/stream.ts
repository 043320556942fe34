// GET /api/v2.6/events: Server-Sent Events from the outbox. A stream starts after Last-Event-ID (the
// header a reconnecting EventSource sends, or the `lastEventId` query parameter), else at the newest
// event; it then follows the feed. Each event's id is its sequence number, so a client that reconnects
// with the last id it saw gets exactly what it missed. Events the caller may not see move the cursor on
// without being sent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventRepository } from '@pds/db';
import type { Logger } from '@pds/runtime';
import type { ResolvedInstance } from '../instances/registry';
import type { EventFeed } from './feed';
import { publicEvent, type EventVisibility, type Viewer } from './visibility';

const PAGE = 200;

export interface StreamDeps {
  events: EventRepository;
  visibility: EventVisibility;
  feed: EventFeed;
  logger: Logger;
  heartbeatMs: number;
}

export class EventStreams {
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly deps: StreamDeps) {}

  /** Ends every open stream (shutdown); their clients reconnect, to another gateway, with Last-Event-ID. */
  endAll(): void {
    for (const res of this.open) res.end();
  }

  /** Where a stream starts: after the id given, or after the newest event (numbered now if it was not yet). */
  async start(tenant: ResolvedInstance, lastEventId: number | undefined): Promise<number> {
    if (lastEventId !== undefined) return lastEventId;
    return this.deps.events.number(tenant.instance.id);
  }

  /** Holds the response open until the client goes, writing events as they come and a heartbeat between. */
  async serve(tenant: ResolvedInstance, viewer: Viewer, from: number, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const instanceId = tenant.instance.id;
    let cursor = from;
    let running: Promise<void> | undefined;
    let again = false;
    let closed = false;

    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // nginx and its kind would otherwise hold the events back in a buffer.
      'X-Accel-Buffering': 'no',
    });
    res.write('retry: 2000\n\n');

    const send = async () => {
      do {
        again = false;
        for (;;) {
          const page = await this.deps.events.after(instanceId, cursor, PAGE);
          if (page.length === 0 || closed) break;
          for (const event of await this.deps.visibility.visible(instanceId, viewer, page)) {
            res.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(publicEvent(event))}\n\n`);
          }
          cursor = page[page.length - 1]!.seq;
          if (page.length < PAGE) break;
        }
      } while (again && !closed);
    };
    // One reader at a time per stream; a wake while it reads makes it read once more.
    const pump = () => {
      if (running) {
        again = true;
        return;
      }
      running = send()
        .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'event stream: reading events failed; the next wake tries again'))
        .finally(() => {
          running = undefined;
        });
    };

    const unwatch = this.deps.feed.watch(instanceId, pump);
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), this.deps.heartbeatMs);
    await new Promise<void>((resolve) => {
      this.open.add(res);
      const end = () => {
        this.open.delete(res);
        closed = true;
        unwatch();
        clearInterval(heartbeat);
        resolve();
      };
      req.once('close', end);
      res.once('close', end);
      pump();
    });
  }
}
