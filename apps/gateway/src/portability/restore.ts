// Puts a verified archive (reader.ts) into an empty instance: every row in ONE transaction (the
// repository's restore, under the instance's import lock), each file's bytes streamed from the archive
// to its key under the instance's prefix. Until the transaction commits no row points at those bytes, so
// a failure leaves nothing a client can see: the rows roll back, and the bytes are removed here (or, after
// a crash, by the next attempt's `removeFileObjects`). The archive's owner becomes the instance's owner;
// every other account is made again disabled and without a password; apps are not set up and debits not
// accepted: the owner approves them again on this cluster.
import type { PortabilityRepository, Restorer } from '@pds/db';
import { objectKey, parseObjectKey, type BlobStore } from '@pds/storage';
import { fileIdStem } from '../files/slug';
import { takesThumbnail } from '../files/thumbnails';
import type { Counts, ExportRecord } from './format';
import { ArchiveError } from './problems';
import { readArchive, type ReadLimits } from './reader';

/** Records written per statement. */
const BATCH = 500;

export interface RestoreInput {
  repository: PortabilityRepository;
  store: BlobStore;
  instance: { id: string; address: string };
  archive: () => AsyncIterable<Buffer>;
  limits: ReadLimits;
  now: Date;
  /** After each file and each batch of records: how many so far. */
  onProgress?: (done: { files: number; records: number }) => void;
  /** Runs inside the transaction, last: the job marks itself done there, so a crash cannot part the two. */
  commit: (restorer: Restorer, counts: Counts) => Promise<void>;
}

/** Why a restore was refused without changing anything (besides the archive's own problems). */
export class RestoreRefusal extends Error {
  constructor(
    readonly problem: 'not-empty' | 'username-taken',
    message: string,
  ) {
    super(message);
  }
}

export interface Restored {
  counts: Counts;
  /** Completed images restored: each wants its thumbnail made again (thumbnails are not in the archive). */
  pictures: string[];
}

/** Restores the archive; throws ArchiveError or RestoreRefusal (nothing changed) or the failure of a service. */
export async function restoreArchive(input: RestoreInput): Promise<Restored> {
  const written: string[] = [];
  try {
    const outcome = await input.repository.restore(input.instance.id, (restorer) => fill(restorer, input, written));
    if (outcome === 'not-empty')
      throw new RestoreRefusal('not-empty', 'The instance holds files or records: an archive is imported into an empty one only');
    return outcome;
  } catch (error) {
    for (const key of written) await input.store.remove(key).catch(() => undefined);
    throw error;
  }
}

/**
 * Removes the objects of files under the instance's prefix: what a crashed attempt wrote before its
 * transaction was lost. Only for an instance whose rows say it has no file, or it would remove live bytes.
 */
export async function removeFileObjects(store: BlobStore, address: string): Promise<number> {
  let removed = 0;
  for await (const object of store.list(`${address}/`)) {
    if (parseObjectKey(object.key)?.address !== address) continue;
    await store.remove(object.key);
    removed++;
  }
  return removed;
}

async function fill(restorer: Restorer, input: RestoreInput, written: string[]): Promise<Restored> {
  const { instance } = input;
  const owner = await restorer.owner();
  const ids = new Map<string, string>();
  const idOf = (username: string | undefined) => (username === undefined ? null : (ids.get(username) ?? null));
  const counters: { base: string; ext: string; last: number }[] = [];
  const seen = new Set<string>();
  const pictures: string[] = [];
  let records: (Omit<ExportRecord, 'links' | 'writer'> & { userId: string | null })[] = [];
  let pairs: [string, string][] = [];
  const done = { files: 0, records: 0 };
  const flush = async () => {
    await restorer.records(records);
    await restorer.links(pairs);
    done.records += records.length;
    records = [];
    pairs = [];
    input.onProgress?.({ ...done });
  };

  for await (const part of readArchive(input.archive(), input.limits)) {
    switch (part.kind) {
      case 'user': {
        const { user } = part;
        let id: string | null = owner.id;
        if (user.kind !== 'owner') {
          id = await restorer.user({ ...user, kind: user.kind });
          if (id === null)
            throw new RestoreRefusal('username-taken', `The archive's account ${user.username} has the name of this instance's owner`);
        }
        ids.set(user.username, id);
        await restorer.grants(id, user.grants ?? []);
        break;
      }
      case 'app':
        await restorer.app({ ...part.app, userId: idOf(part.app.account) }, input.now);
        break;
      case 'bundle':
        await restorer.bundle(part.bundle);
        break;
      case 'combinator':
        await restorer.combinator(part.combinator);
        break;
      case 'debit': {
        const { holder, permissions, ...debit } = part.debit;
        await restorer.debit(
          {
            ...debit,
            requestApplicationId: debit.requestApplicationId ?? null,
            requestDescription: debit.requestDescription ?? null,
            holderId: idOf(holder),
          },
          permissions.map(({ accepted: _accepted, ...terms }) => ({ ...terms, canceledAt: terms.canceledAt ?? null })),
        );
        break;
      }
      case 'file': {
        const { file, content } = part;
        if (content) {
          const key = objectKey(instance.address, file.fileId);
          written.push(key);
          await input.store.write(key, content);
        }
        await restorer.file(
          {
            ...file,
            title: file.title ?? null,
            description: file.description ?? null,
            size: file.size ?? null,
            uploaderId: idOf(file.uploader) ?? owner.id,
            permissions: file.permissions.flatMap((p) => {
              const userId = idOf(p.username);
              return userId ? [{ userId, contentReadable: p.contentReadable }] : [];
            }),
          },
          input.now,
        );
        counters.push(counterOf(file.fileId, file.source, file.name));
        if (file.status === 'Completed' && takesThumbnail(file.name)) pictures.push(file.fileId);
        done.files++;
        input.onProgress?.({ ...done });
        break;
      }
      case 'record': {
        const { links, writer, ...record } = part.record;
        seen.add(record.recordId);
        records.push({ ...record, userId: idOf(writer) });
        // Each link is on both records: it is written once, when the second of the two is read.
        for (const linked of links) if (linked !== record.recordId && seen.has(linked)) pairs.push([record.recordId, linked]);
        if (records.length >= BATCH) await flush();
        break;
      }
      // The old instance's history, kept in the archive for its owner to read: this instance's log starts anew.
      case 'activity':
        break;
      // A link's address was given out for the old instance, and its secrets are not in the archive: none is made again.
      case 'link':
        break;
      case 'end': {
        await flush();
        await restorer.fileIdCounters(counters.filter((c) => c.last >= 0));
        // What was restored: the activity and the links the archive holds are not.
        const { activity: _history, links: _links, ...counts } = part.manifest.counts;
        await input.commit(restorer, counts);
        return { counts, pictures };
      }
    }
  }
  throw new ArchiveError('truncated', 'the archive ended before its end');
}

/** The counter a restored fileId takes: its `-N` (0 for the plain slug) when it is of its name's shape, else -1 (none). */
function counterOf(fileId: string, source: string, name: string): { base: string; ext: string; last: number } {
  const { base, ext } = fileIdStem(source, name);
  if (fileId === `${base}${ext}`) return { base, ext, last: 0 };
  const suffix = fileId.startsWith(`${base}-`) && fileId.endsWith(ext) ? fileId.slice(base.length + 1, fileId.length - ext.length) : '';
  return /^[1-9]\d{0,8}$/.test(suffix) ? { base, ext, last: Number(suffix) } : { base, ext, last: -1 };
}
