// Which events an account may see, for the stream and for webhooks alike. The owner sees every event.
// Any other account (an app's or a plain user's) sees record events of tables its grants let it read,
// file events of files it uploaded or was given, and its own record and file changes; nothing else, not
// even that something else happened (accounts, apps, debits and settings are the owner's).
import { filesVisibleTo, type GatewayDb, type StoredEvent } from '@pds/db';
import { covers, type GrantSource } from '../data/access';

/** Who is looking: the owner, or an account with its grants. */
export type Viewer = { owner: true } | { owner: false; userId: string };

/** What a subscription narrows the events to (absent or empty: all the viewer may see). */
export interface EventFilter {
  types?: string[];
  namespaces?: string[];
}

/** An event as clients receive it (docs/events.md): never the client address. */
export interface PublicEvent {
  id: string;
  seq: number;
  type: string;
  time: string;
  actor: { kind: string; id: string | null };
  object: Record<string, unknown>;
}

export function publicEvent(event: StoredEvent): PublicEvent {
  return {
    id: String(event.seq),
    seq: event.seq,
    type: event.type,
    time: event.at.toISOString(),
    actor: { kind: event.actorKind, id: event.actorId },
    object: event.object,
  };
}

export class EventVisibility {
  constructor(
    private readonly db: GatewayDb,
    private readonly grants: GrantSource,
  ) {}

  /** The events of `events` the viewer may see and the filter wants, in order. */
  async visible(instanceId: string, viewer: Viewer, events: StoredEvent[], filter: EventFilter = {}): Promise<StoredEvent[]> {
    const wanted = events.filter((event) => matches(event, filter));
    if (viewer.owner || wanted.length === 0) return wanted;
    const grants = await this.grants.grants(instanceId, viewer.userId);
    const fileIds = [...new Set(wanted.flatMap((e) => (e.type.startsWith('file.') ? [String(e.object.fileId)] : [])))];
    const files = await filesVisibleTo(this.db, instanceId, viewer.userId, fileIds);
    return wanted.filter((event) => {
      if (event.type.startsWith('record.')) {
        const table = { namespace: String(event.object.namespace), endpoint: String(event.object.endpoint) };
        return event.actorId === viewer.userId || grants.some((grant) => covers(grant, 'read', table));
      }
      if (event.type.startsWith('file.')) return event.actorId === viewer.userId || files.has(String(event.object.fileId));
      return false;
    });
  }
}

function matches(event: StoredEvent, filter: EventFilter): boolean {
  if (filter.types?.length && !filter.types.includes(event.type)) return false;
  if (filter.namespaces?.length) return event.type.startsWith('record.') && filter.namespaces.includes(String(event.object.namespace));
  return true;
}
