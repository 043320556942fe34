// An instance's worth of export parts (users, an app, a bundle and a debit, files in every state, records
// in two tables with links), and tools to take an archive apart and put it back together altered.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { extract, pack, type Header } from 'tar-stream';
import type {
  ExportActivity,
  ExportApp,
  ExportBundle,
  ExportCombinator,
  ExportDebit,
  ExportLink,
  ExportRecord,
  ExportUser,
} from '../src/portability/format';
import type { ExportSource, FileToExport } from '../src/portability/writer';

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const at = (day: number) => new Date(Date.UTC(2026, 10, day, 10)).toISOString();

export interface Sample {
  users: ExportUser[];
  apps: ExportApp[];
  bundles: ExportBundle[];
  combinators: ExportCombinator[];
  debits: ExportDebit[];
  files: (FileToExport['file'] & { bytes?: Buffer })[];
  links: ExportLink[];
  records: ExportRecord[];
  activity: ExportActivity[];
}

/** A small instance; `largeBytes` is the size of its one large file. */
export function sampleInstance(largeBytes = 3 * 1024 * 1024 + 17): Sample {
  const post = randomUUID();
  const comment = randomUUID();
  const file = (fileId: string, extra: Partial<Sample['files'][number]>): Sample['files'][number] => ({
    fileId,
    name: fileId,
    source: 'camera',
    tags: ['holiday'],
    dateCreated: at(1),
    lastUpdated: at(2),
    status: 'Completed',
    contentPublic: false,
    uploader: 'alice',
    permissions: [{ username: 'alice', contentReadable: true }],
    ...extra,
  });
  return {
    users: [
      { username: 'alice', email: 'alice@example.com', fullName: 'Alice A', kind: 'owner', state: 'active', createdAt: at(1) },
      { username: 'bob', email: 'bob@example.com', kind: 'user', state: 'disabled', createdAt: at(2) },
      {
        username: 'notes-app',
        kind: 'application',
        state: 'active',
        createdAt: at(3),
        grants: [{ namespace: 'notes', endpoint: '*', access: 'write' }],
      },
    ],
    apps: [
      {
        appId: 'notes-app',
        record: { title: 'Notes', namespace: 'notes' },
        version: 3,
        setup: true,
        enabled: true,
        setupVersion: 3,
        account: 'notes-app',
      },
    ],
    bundles: [{ name: 'posts', query: { posts: { endpoints: [{ endpoint: 'social/posts' }] } }, createdAt: at(4) }],
    combinators: [
      {
        name: 'long-posts',
        query: [{ endpoint: 'social/posts', filters: [{ field: 'text', operator: { operator: 'contains', value: 'x' } }] }],
        createdAt: at(4),
      },
    ],
    debits: [
      {
        key: 'app-notes-app',
        requestClientName: 'Notes',
        requestClientUrl: 'https://notes.example',
        requestClientLogoUrl: 'https://notes.example/logo.png',
        holder: 'notes-app',
        createdAt: at(4),
        permissions: [
          {
            createdAt: at(4),
            purpose: 'sync',
            start: at(5),
            period: 86400,
            cancelAtPeriodEnd: false,
            termsUrl: 'https://notes.example/terms',
            bundleName: 'posts',
            accepted: true,
          },
        ],
      },
    ],
    files: [
      file('camerabeach.jpg', { bytes: randomBytes(largeBytes), title: 'Beach', description: 'At noon' }),
      file('cameranotes.txt', {
        bytes: Buffer.from('plain text, easily compressed. '.repeat(5000)),
        contentPublic: true,
        permissions: [
          { username: 'alice', contentReadable: true },
          { username: 'bob', contentReadable: false },
        ],
      }),
      file('cameraempty.bin', { bytes: Buffer.alloc(0) }),
      file('cameraunfinished.bin', { status: 'New' }),
      file('cameragone.bin', { status: 'Deleted', uploader: 'bob' }),
    ],
    links: [
      {
        id: randomUUID(),
        fileIds: ['camerabeach.jpg', 'cameranotes.txt'],
        hasPassword: true,
        expiresAt: at(30),
        downloadLimit: 3,
        downloads: 1,
        views: 4,
        lastUsedAt: at(8),
        allowDownload: true,
        createdAt: at(7),
      },
      {
        id: randomUUID(),
        fileIds: ['cameragone.bin'],
        hasPassword: false,
        downloads: 0,
        views: 0,
        allowDownload: false,
        createdAt: at(5),
        revokedAt: at(6),
      },
    ],
    records: [
      {
        namespace: 'social',
        endpoint: 'posts',
        recordId: post,
        data: { text: 'hello', n: 1 },
        links: [comment],
        createdAt: at(6),
        writer: 'alice',
      },
      { namespace: 'social', endpoint: 'posts', recordId: randomUUID(), data: { text: 'again' }, links: [], createdAt: at(6) },
      {
        namespace: 'social',
        endpoint: 'comments',
        recordId: comment,
        data: { text: 'nice' },
        links: [post],
        createdAt: at(7),
        writer: 'notes-app',
      },
    ],
    activity: [
      {
        kind: 'change',
        type: 'record.created',
        actor: { kind: 'application', username: 'notes-app' },
        object: { namespace: 'social', endpoint: 'comments', recordId: comment },
        address: '203.0.113.7',
        time: at(7),
      },
      { kind: 'change', type: 'user.deleted', actor: { kind: 'system' }, object: { username: 'carol' }, time: at(8) },
      {
        kind: 'read',
        type: 'link.used',
        actor: { kind: 'anonymous' },
        object: { linkId: randomUUID(), action: 'downloaded', fileId: 'camerabeach.jpg', name: 'camerabeach.jpg', files: 2 },
        address: '198.51.100.10',
        time: at(8),
        times: 2,
      },
      {
        kind: 'read',
        type: 'login.failed',
        actor: { kind: 'user' },
        object: { username: 'mallory' },
        address: '198.51.100.9',
        time: at(8),
      },
    ],
  };
}

async function* each<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

/** An export source over `sample`, each part readable once, file bytes opened on demand. */
export function sourceOf(sample: Sample, instance = 'alice.pds.test'): ExportSource {
  return {
    instance,
    createdAt: new Date(Date.UTC(2026, 10, 25, 12)),
    users: each(sample.users),
    apps: each(sample.apps),
    bundles: each(sample.bundles),
    combinators: each(sample.combinators),
    debits: each(sample.debits),
    files: each(
      sample.files.map(({ bytes, ...file }) => ({
        file,
        ...(bytes
          ? { content: async () => ({ size: bytes.length, contentType: 'application/octet-stream', stream: Readable.from(chunks(bytes)) }) }
          : {}),
      })),
    ),
    links: each(sample.links),
    records: each(sample.records),
    activity: each(sample.activity),
  };
}

function* chunks(bytes: Buffer, size = 64 * 1024): Generator<Buffer> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

/** A Writable that keeps what it is given. */
export function collector(): { out: Writable; bytes: () => Buffer } {
  const parts: Buffer[] = [];
  return {
    out: new Writable({
      write(chunk: Buffer, _encoding, callback) {
        parts.push(chunk);
        callback();
      },
    }),
    bytes: () => Buffer.concat(parts),
  };
}

export interface TarEntry {
  header: Partial<Header> & Pick<Header, 'name'>;
  data: Buffer;
}

/** The entries of a .tar.gz, in order. */
export async function entriesOf(archive: Buffer): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  const reading = extract();
  const feeding = pipeline(Readable.from([archive]), createGunzip(), reading);
  for await (const entry of reading) {
    const data: Buffer[] = [];
    for await (const chunk of entry) data.push(chunk as Buffer);
    entries.push({ header: entry.header, data: Buffer.concat(data) });
  }
  await feeding;
  return entries;
}

/** A .tar.gz of `entries`, in order (each header's size is set from its data). */
export async function tarGz(entries: TarEntry[]): Promise<Buffer> {
  const tar = pack();
  const { out, bytes } = collector();
  const writing = pipeline(tar, createGzip(), out);
  for (const { header, data } of entries) {
    await new Promise<void>((resolve, reject) =>
      tar.entry({ ...header, size: data.length }, data, (error) => (error ? reject(error) : resolve())),
    );
  }
  tar.finalize();
  await writing;
  return bytes();
}

/** The archive with its entries edited (taken apart, changed, packed again: gzip stays valid). */
export async function edited(archive: Buffer, edit: (entries: TarEntry[]) => TarEntry[]): Promise<Buffer> {
  return tarGz(edit(await entriesOf(archive)));
}

export const file = (name: string, data: Buffer | string): TarEntry => ({
  header: { name, size: 0, mode: 0o644, type: 'file', mtime: new Date() },
  data: Buffer.from(data),
});

export async function* once(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

/**
 * The archive as format version 1 has it: without the activity section, which version 2 added (marker,
 * manifest version, counts and entry list follow).
 */
export async function asVersion1(archive: Buffer): Promise<Buffer> {
  return edited(archive, (entries) => {
    const newer = ['activity/', 'links/'];
    const kept = entries
      .filter((entry) => !newer.some((section) => entry.header.name.startsWith(section)) && entry.header.name !== 'manifest.json')
      .map((entry) =>
        entry.header.name === 'pds-export.json' ? { ...entry, data: Buffer.from('{"format":"pds-export","version":1}') } : entry,
      );
    const manifestEntry = entries.at(-1) as TarEntry;
    const manifest = JSON.parse(manifestEntry.data.toString()) as { counts: Record<string, number> };
    const { activity: _activity, links: _links, ...counts } = manifest.counts;
    const listed = kept.map(({ header, data }) => ({ path: header.name, size: data.length, sha256: sha256(data) }));
    return [...kept, { ...manifestEntry, data: Buffer.from(JSON.stringify({ ...manifest, version: 1, counts, entries: listed })) }];
  });
}
