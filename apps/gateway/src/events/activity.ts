// The owner's activity log: changes from the outbox and the reads kept (reads.ts), newest first, each
// with the names of who acted and of what it names (files, apps, accounts), looked up in one statement
// for the whole page, so a client words an entry without a call per entry.
import type { ActivityEntry, ActivityNames, EventRepository } from '@pds/db';
import type { ResolvedInstance } from '../instances/registry';

export interface ActivityInput {
  since?: string;
  until?: string;
  actor?: string;
  type?: string;
  take: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The ids an entry's object names, by kind (`userId` of a share or a log-in is an account). */
function idsIn(object: Record<string, unknown>): { accounts: string[]; files: string[]; apps: string[] } {
  const text = (key: string) => (typeof object[key] === 'string' ? [object[key]] : []);
  return { accounts: text('userId').filter((id) => UUID.test(id)), files: text('fileId'), apps: text('appId') };
}

export class ActivityService {
  constructor(private readonly events: EventRepository) {}

  async list(tenant: ResolvedInstance, input: ActivityInput) {
    const instanceId = tenant.instance.id;
    const entries = await this.events.activity(instanceId, {
      since: input.since ? new Date(input.since) : undefined,
      until: input.until ? new Date(input.until) : undefined,
      actorId: input.actor,
      type: input.type,
      take: input.take,
    });
    const wanted = { accounts: new Set<string>(), files: new Set<string>(), apps: new Set<string>() };
    for (const entry of entries) {
      if (entry.actorId) wanted.accounts.add(entry.actorId);
      const ids = idsIn(entry.object);
      ids.accounts.forEach((id) => wanted.accounts.add(id));
      ids.files.forEach((id) => wanted.files.add(id));
      ids.apps.forEach((id) => wanted.apps.add(id));
    }
    const names =
      entries.length === 0
        ? undefined
        : await this.events.names(instanceId, { accounts: [...wanted.accounts], files: [...wanted.files], apps: [...wanted.apps] });
    return entries.map((entry) => shown(entry, names));
  }
}

function shown(entry: ActivityEntry, names: ActivityNames | undefined) {
  const ids = idsIn(entry.object);
  const named: Record<string, string> = {};
  for (const kind of ['accounts', 'files', 'apps'] as const) {
    for (const id of ids[kind]) {
      const name = names?.[kind].get(id);
      if (name !== undefined) named[id] = name;
    }
  }
  return {
    kind: entry.kind,
    type: entry.type,
    actor: { kind: entry.actorKind, id: entry.actorId, name: (entry.actorId && names?.accounts.get(entry.actorId)) || null },
    object: entry.object,
    names: named,
    address: entry.address,
    times: entry.times,
    time: new Date(entry.at).toISOString(),
  };
}
