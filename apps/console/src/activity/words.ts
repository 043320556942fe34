// The activity log in sentences a person reads ("Notes app read 120 records of your diary, 3 times"),
// from the API's entries: names the server looked up (files, apps, accounts) in place of ids, and
// repeats of the same thing on the same day folded into one line. Pure, so it is tested without a browser.
export interface ActivityEntry {
  kind: 'change' | 'read';
  type: string;
  actor: { kind: string; id: string | null; name: string | null };
  object: Record<string, unknown>;
  /** The names of the object's ids (a file's name, an app's title, an account's username). */
  names: Record<string, string>;
  address: string | null;
  /** Identical reads within a second are one entry that counts them. */
  times: number;
  time: string;
}

/** One line of the log: one entry, or several of the same on one day. */
export interface ActivityLine {
  key: string;
  sentence: string;
  /** The newest time it happened. */
  time: string;
  /** Where from, for log-ins (the rest is the owner's own apps and people). */
  address?: string;
}

const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');
const plural = (count: number, one: string, many = `${one}s`) => `${count.toLocaleString('en')} ${count === 1 ? one : many}`;

/** "Notes app", "bob", "You": who did it. */
function who(entry: ActivityEntry): string {
  const { kind, name } = entry.actor;
  if (kind === 'owner') return 'You';
  if (kind === 'application') return name ? (/\bapp\b/i.test(name) ? name : `${name} app`) : 'An app';
  if (kind === 'user') return name ?? 'Someone';
  // Someone without an account: the holder of a share link.
  if (kind === 'anonymous') return 'Someone';
  return 'Your data store';
}

/** The object's file, app or account by name; its id only when the server knows no name (it is gone). */
function named(entry: ActivityEntry, key: string, fallback: string): string {
  const id = text(entry.object[key]);
  return entry.names[id] ?? (id || fallback);
}

/** "tax.pdf", "tax.pdf and 2 more files": what a share link's event names (its first file, and how many). */
function linked(entry: ActivityEntry): string {
  const more = Number(entry.object.files ?? 1) - 1;
  // The file's name now, else the name it had when the event was written (it may be purged since).
  const id = text(entry.object.fileId);
  const first = entry.names[id] ?? (text(entry.object.name) || id || 'a file');
  return more > 0 ? `${first} and ${plural(more, 'more file', 'more files')}` : first;
}

/** "your diary", "your fitness (steps)": a table as its owner thinks of it. */
function table(entry: ActivityEntry): string {
  const namespace = text(entry.object.namespace);
  const endpoint = text(entry.object.endpoint);
  return endpoint && endpoint !== namespace ? `your ${namespace} (${endpoint})` : `your ${namespace}`;
}

const FILE_VERBS: Record<string, (file: string) => string> = {
  uploaded: (file) => `started uploading ${file}`,
  completed: (file) => `uploaded ${file}`,
  updated: (file) => `changed the details of ${file}`,
  deleted: (file) => `moved ${file} to the trash`,
  restored: (file) => `restored ${file}`,
  purged: (file) => `deleted ${file} for good`,
  public: (file) => `made ${file} public`,
  private: (file) => `made ${file} private`,
};
const RECORD_VERBS: Record<string, string> = {
  created: 'added a record to',
  updated: 'changed a record of',
  deleted: 'deleted a record of',
};
const APP_VERBS: Record<string, string> = { setup: 'set up', enabled: 'enabled', disabled: 'disabled' };
const USER_VERBS: Record<string, string> = {
  created: 'added the account',
  updated: 'changed the account',
  enabled: 'enabled the account',
  disabled: 'disabled the account',
  deleted: 'deleted the account',
};

/** What happened, as a sentence without its repeats: "Notes app read 120 records of your diary". */
export function sentence(entry: ActivityEntry, count = entry.object.count): string {
  const o = entry.object;
  const [subject, verb = ''] = entry.type.split('.');
  const file = () => named(entry, 'fileId', 'a file');
  switch (entry.type) {
    case 'records.read':
      return o.recordId
        ? `${who(entry)} read one of your records`
        : `${who(entry)} read ${plural(Number(count ?? 0), 'record')} of ${table(entry)}`;
    case 'file.content':
      return `${who(entry)} opened ${file()}`;
    case 'debit.values':
      return `${who(entry)} took the data of the data debit “${text(o.debitKey)}”`;
    case 'login':
      return `${who(entry)} logged in`;
    case 'login.failed':
      return `Someone tried to log in as ${text(o.username)} with a wrong password`;
    case 'app.token':
      return `${named(entry, 'appId', 'an app')} was let in to your data store`;
    case 'file.shared':
      return `${who(entry)} shared ${file()} with ${named(entry, 'userId', 'someone')}`;
    case 'file.unshared':
      return `${who(entry)} stopped sharing ${file()} with ${named(entry, 'userId', 'someone')}`;
    case 'settings.changed':
      return `${who(entry)} changed your account’s name or e-mail address`;
    case 'link.created':
      return `${who(entry)} made a share link to ${linked(entry)}`;
    case 'link.revoked':
      return `${who(entry)} revoked the share link to ${linked(entry)}`;
    case 'link.used':
      return `${who(entry)} with your link to ${linked(entry)} ${o.action === 'downloaded' ? 'downloaded' : 'viewed'} ${Number(o.files ?? 1) > 1 ? 'them' : 'it'}`;
  }
  const fileVerb = subject === 'file' ? FILE_VERBS[verb] : undefined;
  if (fileVerb) return `${who(entry)} ${fileVerb(file())}`;
  if (subject === 'record' && RECORD_VERBS[verb]) return `${who(entry)} ${RECORD_VERBS[verb]} ${table(entry)}`;
  if (subject === 'app' && APP_VERBS[verb]) return `${who(entry)} ${APP_VERBS[verb]} ${named(entry, 'appId', 'an app')}`;
  if (subject === 'debit') return `${who(entry)} ${verb === 'enabled' ? 'agreed to' : 'cancelled'} the data debit “${text(o.debitKey)}”`;
  if (subject === 'user' && USER_VERBS[verb]) return `${who(entry)} ${USER_VERBS[verb]} ${text(o.username)}`;
  return `${who(entry)}: ${entry.type.replace(/[._]/g, ' ')}`;
}

/** The local day of an ISO time, "2026-11-28". */
export const dayOf = (iso: string) => new Date(iso).toLocaleDateString('en-CA');

/** What makes two entries the same thing done again: who, what, to what (a read's count aside). */
function sameness(entry: ActivityEntry): string {
  const { count: _count, ...object } = entry.object;
  return JSON.stringify([entry.actor.kind, entry.actor.id, entry.type, object, entry.address]);
}

/**
 * The entries (newest first) as lines: the same thing done again on the same day is one line that says
 * how often ("…, 3 times"), its records added up.
 */
export function activityLines(entries: ActivityEntry[]): ActivityLine[] {
  const groups = new Map<string, { first: ActivityEntry; times: number; count: number }>();
  for (const entry of entries) {
    const key = `${dayOf(entry.time)}\n${sameness(entry)}`;
    const group = groups.get(key);
    if (group) {
      group.times += entry.times;
      group.count += Number(entry.object.count ?? 0);
    } else groups.set(key, { first: entry, times: entry.times, count: Number(entry.object.count ?? 0) });
  }
  return [...groups.entries()].map(([key, { first, times, count }]) => ({
    key,
    sentence: `${sentence(first, count)}${times > 1 ? `, ${times.toLocaleString('en')} times` : ''}`,
    time: first.time,
    address: first.type.startsWith('login') && first.address ? first.address : undefined,
  }));
}

/** "Today", "Yesterday", "Monday 3 November" (and the year when it is not this one). */
export function dayHeading(iso: string, now = new Date()): string {
  const date = new Date(iso);
  const yesterday = new Date(now);
  yesterday.setDate(now.getDate() - 1);
  if (dayOf(iso) === now.toLocaleDateString('en-CA')) return 'Today';
  if (dayOf(iso) === yesterday.toLocaleDateString('en-CA')) return 'Yesterday';
  const year = date.getFullYear() === now.getFullYear() ? {} : { year: 'numeric' as const };
  return date.toLocaleDateString(undefined, { weekday: 'long', day: 'numeric', month: 'long', ...year });
}
