// What an archive's entries declare, checked as they are read: each line fits its schema, ids are unique,
// every username, bundle and linked record named is in the archive, and the counts the manifest must
// match. An importer that has read a whole archive through this check will not fail halfway on its data.
import type { z } from 'zod';
import { ArchiveError } from './problems';
import {
  PART_SCHEMAS,
  fileSchema,
  noCounts,
  type ExportActivity,
  type ExportApp,
  type ExportBundle,
  type ExportCombinator,
  type ExportDebit,
  type ExportFile,
  type ExportLink,
  type ExportRecord,
  type ExportUser,
  type PartSection,
} from './format';

export type PartItem =
  | { kind: 'user'; user: ExportUser }
  | { kind: 'app'; app: ExportApp }
  | { kind: 'bundle'; bundle: ExportBundle }
  | { kind: 'combinator'; combinator: ExportCombinator }
  | { kind: 'debit'; debit: ExportDebit }
  | { kind: 'link'; link: ExportLink }
  | { kind: 'record'; record: ExportRecord }
  | { kind: 'activity'; activity: ExportActivity };

const utf8 = new TextDecoder('utf-8', { fatal: true });

export class ContentsCheck {
  readonly counts = noCounts();
  private readonly usernames = new Set<string>();
  private readonly appIds = new Set<string>();
  private readonly bundleNames = new Set<string>();
  private readonly combinatorNames = new Set<string>();
  private readonly debitKeys = new Set<string>();
  private readonly fileIds = new Set<string>();
  private readonly linkIds = new Set<string>();
  private readonly recordIds = new Set<string>();
  /** Linked recordIds not seen yet when the link was read, and where: resolved by `finish`. */
  private readonly pendingLinks = new Map<string, string>();
  private owners = 0;

  /** The items of one NDJSON part, each checked. */
  *part(section: PartSection, bytes: Buffer, path: string): Generator<PartItem> {
    let table: string | undefined;
    for (const [value, where] of ndjsonLines(bytes, path)) {
      const item = parse(PART_SCHEMAS[section] as z.ZodType, value, where);
      switch (section) {
        case 'users':
          yield { kind: 'user', user: this.user(item as ExportUser, where) };
          break;
        case 'apps':
          yield { kind: 'app', app: this.app(item as ExportApp, where) };
          break;
        case 'bundles':
          yield { kind: 'bundle', bundle: this.bundle(item as ExportBundle, where) };
          break;
        case 'combinators':
          yield { kind: 'combinator', combinator: this.combinator(item as ExportCombinator, where) };
          break;
        case 'debits':
          yield { kind: 'debit', debit: this.debit(item as ExportDebit, where) };
          break;
        case 'links':
          yield { kind: 'link', link: this.link(item as ExportLink, where) };
          break;
        case 'records': {
          const record = this.record(item as ExportRecord, where);
          const itsTable = `${record.namespace}/${record.endpoint}`;
          if (table !== undefined && itsTable !== table) {
            throw new ArchiveError('invalid-entry', `a part holds one table, but this record is in ${itsTable}, not ${table}`, where);
          }
          table = itsTable;
          yield { kind: 'record', record };
          break;
        }
        case 'activity':
          yield { kind: 'activity', activity: this.activity(item as ExportActivity, where) };
      }
    }
  }

  /** The metadata of one file, checked. */
  file(bytes: Buffer, path: string): ExportFile {
    const file = parse(fileSchema, parseJson(bytes, path), path);
    unique(this.fileIds, file.fileId, 'fileId', path);
    this.knownUser(file.uploader, path);
    for (const permission of file.permissions) this.knownUser(permission.username, path);
    this.counts.files++;
    this.counts.fileBytes += file.size ?? 0;
    return file;
  }

  /** Checks what only the whole archive can tell. */
  finish(): void {
    for (const [recordId, where] of this.pendingLinks) {
      if (!this.recordIds.has(recordId))
        throw new ArchiveError('unknown-reference', `links to record ${recordId}, which is not in the archive`, where);
    }
    if (this.owners !== 1) throw new ArchiveError('invalid-entry', `the archive has ${this.owners} owner accounts, not one`);
  }

  private user(user: ExportUser, where: string): ExportUser {
    unique(this.usernames, user.username, 'username', where);
    if (user.kind === 'owner') this.owners++;
    this.counts.users++;
    return user;
  }

  private app(app: ExportApp, where: string): ExportApp {
    unique(this.appIds, app.appId, 'appId', where);
    this.knownUser(app.account, where);
    this.counts.apps++;
    return app;
  }

  private bundle(bundle: ExportBundle, where: string): ExportBundle {
    unique(this.bundleNames, bundle.name, 'bundle name', where);
    this.counts.bundles++;
    return bundle;
  }

  private combinator(combinator: ExportCombinator, where: string): ExportCombinator {
    unique(this.combinatorNames, combinator.name, 'combinator name', where);
    this.counts.combinators++;
    return combinator;
  }

  private debit(debit: ExportDebit, where: string): ExportDebit {
    unique(this.debitKeys, debit.key, 'debit key', where);
    this.knownUser(debit.holder, where);
    for (const terms of debit.permissions) {
      if (!this.bundleNames.has(terms.bundleName)) {
        throw new ArchiveError('unknown-reference', `names bundle ${terms.bundleName}, which is not in the archive`, where);
      }
    }
    this.counts.debits++;
    return debit;
  }

  /** A link names files of the archive (their section comes before). */
  private link(link: ExportLink, where: string): ExportLink {
    unique(this.linkIds, link.id, 'link id', where);
    for (const fileId of link.fileIds) {
      if (!this.fileIds.has(fileId))
        throw new ArchiveError('unknown-reference', `names file ${fileId}, which is not in the archive`, where);
    }
    this.counts.links++;
    return link;
  }

  private record(record: ExportRecord, where: string): ExportRecord {
    unique(this.recordIds, record.recordId, 'recordId', where);
    this.knownUser(record.writer, where);
    for (const linked of record.links) if (!this.recordIds.has(linked)) this.pendingLinks.set(linked, where);
    this.counts.records++;
    return record;
  }

  private activity(entry: ExportActivity, where: string): ExportActivity {
    this.knownUser(entry.actor.username, where);
    this.counts.activity++;
    return entry;
  }

  private knownUser(username: string | undefined, where: string): void {
    if (username !== undefined && !this.usernames.has(username)) {
      throw new ArchiveError('unknown-reference', `names user ${username}, who is not in the archive`, where);
    }
  }
}

function unique(seen: Set<string>, id: string, what: string, where: string): void {
  if (seen.has(id)) throw new ArchiveError('duplicate', `${what} ${id} appears twice`, where);
  seen.add(id);
}

function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ArchiveError('invalid-entry', `${issue?.path.join('.') || 'the value'}: ${issue?.message}`, where);
}

export function parseJson(bytes: Buffer, where: string): unknown {
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch {
    throw new ArchiveError('invalid-entry', 'is not UTF-8 JSON', where);
  }
}

/** Each line of an NDJSON part with where it is; every line ends with a newline, and a part has one at least. */
function* ndjsonLines(bytes: Buffer, path: string): Generator<[unknown, string]> {
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a)
    throw new ArchiveError('invalid-entry', 'is not NDJSON ending with a newline', path);
  let start = 0;
  for (let line = 1; start < bytes.length; line++) {
    const end = bytes.indexOf(0x0a, start);
    const where = `${path} line ${line}`;
    yield [parseJson(bytes.subarray(start, end), where), where];
    start = end + 1;
  }
}
