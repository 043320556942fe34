// The owner's activity log: changes from the outbox and the reads kept (reads.ts), newest first.
import type { ActivityEntry, EventRepository } from '@pds/db';
import type { ResolvedInstance } from '../instances/registry';

export interface ActivityInput {
  since?: string;
  until?: string;
  actor?: string;
  type?: string;
  take: number;
}

export class ActivityService {
  constructor(private readonly events: EventRepository) {}

  async list(tenant: ResolvedInstance, input: ActivityInput) {
    const entries = await this.events.activity(tenant.instance.id, {
      since: input.since ? new Date(input.since) : undefined,
      until: input.until ? new Date(input.until) : undefined,
      actorId: input.actor,
      type: input.type,
      take: input.take,
    });
    return entries.map(shown);
  }
}

function shown(entry: ActivityEntry) {
  return {
    kind: entry.kind,
    type: entry.type,
    actor: { kind: entry.actorKind, id: entry.actorId },
    object: entry.object,
    address: entry.address,
    times: entry.times,
    time: new Date(entry.at).toISOString(),
  };
}
