// The export archive format, version 3 (and versions 1 and 2, without the share links and the activity log): what the writer puts in it, that the reader gives back exactly
// that, and that the reader refuses, with a report naming the problem and the entry, every archive that
// is altered, cut short, of another version, too large, or shaped otherwise.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { manifestJsonSchema, type Manifest } from '../src/portability/format';
import { DEFAULT_READ_LIMITS, readArchive, verifyArchive, type ArchivePart, type ReadLimits } from '../src/portability/reader';
import { writeArchive } from '../src/portability/writer';
import {
  asVersion1,
  collector,
  edited,
  entriesOf,
  file,
  once,
  sampleInstance,
  sha256,
  sourceOf,
  tarGz,
  type Sample,
  type TarEntry,
} from './portability-fixtures';

const SCHEMA_FILE = path.join(__dirname, '../../../docs/export-manifest.schema.json');

async function archiveOf(sample: Sample): Promise<{ archive: Buffer; manifest: Manifest }> {
  const { out, bytes } = collector();
  const manifest = await writeArchive(sourceOf(sample), out);
  return { archive: bytes(), manifest };
}

async function partsOf(archive: Buffer, limits?: ReadLimits): Promise<{ parts: ArchivePart[]; contents: Map<string, string> }> {
  const parts: ArchivePart[] = [];
  const contents = new Map<string, string>();
  for await (const part of readArchive(once(archive), limits)) {
    parts.push(part);
    if (part.kind === 'file' && part.content) {
      const chunks: Buffer[] = [];
      for await (const chunk of part.content) chunks.push(chunk);
      contents.set(part.file.fileId, sha256(Buffer.concat(chunks)));
    }
  }
  return { parts, contents };
}

const verify = (archive: Buffer, limits?: Partial<ReadLimits>) => verifyArchive(once(archive), { ...DEFAULT_READ_LIMITS, ...limits });

let sample: Sample;
let archive: Buffer;
let manifest: Manifest;

beforeAll(async () => {
  sample = sampleInstance();
  ({ archive, manifest } = await archiveOf(sample));
});

describe('the writer', () => {
  it('writes the marker first, the sections in order, each Completed file as metadata then bytes, and the manifest last', async () => {
    const names = (await entriesOf(archive)).map((entry) => entry.header.name);
    expect(names).toEqual([
      'pds-export.json',
      'users/00000001.ndjson',
      'apps/00000001.ndjson',
      'bundles/00000001.ndjson',
      'combinators/00000001.ndjson',
      'debits/00000001.ndjson',
      'files/00000001.json',
      'files/00000001.bin',
      'files/00000002.json',
      'files/00000002.bin',
      'files/00000003.json',
      'files/00000003.bin',
      'files/00000004.json',
      'files/00000005.json',
      'links/00000001.ndjson',
      // One part per table: posts, then comments.
      'records/00000001.ndjson',
      'records/00000002.ndjson',
      'activity/00000001.ndjson',
      'manifest.json',
    ]);
  });

  it('writes no activity section for an instance without activity, and counts none', async () => {
    const { archive: quiet, manifest: written } = await archiveOf({ ...sample, activity: [] });
    expect((await entriesOf(quiet)).some((entry) => entry.header.name.startsWith('activity/'))).toBe(false);
    expect(written.counts.activity).toBe(0);
    expect(await verify(quiet)).toEqual({ ok: true, manifest: written });
  });

  it('lists every entry before the manifest with its size and SHA-256, and counts what it wrote', async () => {
    const entries = await entriesOf(archive);
    expect(JSON.parse((entries.at(-1) as TarEntry).data.toString())).toEqual(manifest);
    expect(manifest.entries).toEqual(
      entries.slice(0, -1).map(({ header, data }) => ({ path: header.name, size: data.length, sha256: sha256(data) })),
    );
    const fileBytes = sample.files.reduce((sum, f) => sum + (f.bytes?.length ?? 0), 0);
    expect(manifest.counts).toEqual({
      users: 3,
      apps: 1,
      bundles: 1,
      combinators: 1,
      debits: 1,
      files: 5,
      fileBytes,
      records: 3,
      activity: 4,
      links: 2,
    });
    expect(manifest).toMatchObject({ format: 'pds-export', version: 3, instance: 'alice.pds.test', createdAt: '2026-11-25T12:00:00.000Z' });
  });

  it('writes regular files only, with ustar headers plain tar tools read', async () => {
    for (const { header } of await entriesOf(archive)) {
      expect(header).toMatchObject({ type: 'file', mode: 0o644, uid: 0, gid: 0 });
      expect(header.pax).toBeFalsy();
    }
  });

  it('refuses a field the format does not define (a password hash) and leaves the output failed', async () => {
    const withSecret = sampleInstance(10);
    (withSecret.users[1] as Record<string, unknown>).passwordHash = 'scrypt$…';
    const { out } = collector();
    await expect(writeArchive(sourceOf(withSecret), out)).rejects.toThrow(/users\[1\].*passwordHash/s);
    expect(out.destroyed).toBe(true);
  });

  it('refuses a Completed file whose bytes are missing, or whose bytes differ in length from their size', async () => {
    const missing = sampleInstance(10);
    delete missing.files[0]?.bytes;
    await expect(writeArchive(sourceOf(missing), collector().out)).rejects.toThrow(
      'camerabeach.jpg is Completed but its bytes are not in the store',
    );

    const short = sourceOf(sampleInstance(10));
    short.files = (async function* () {
      const { bytes: _bytes, ...completed } = sampleInstance(10).files[0] as Sample['files'][number];
      yield { file: completed, content: async () => ({ size: 100, contentType: 'x/y', stream: Readable.from([Buffer.alloc(60)]) }) };
    })();
    await expect(writeArchive(short, collector().out)).rejects.toThrow('the store gave fewer bytes than its size, 100');
  });

  it('reports progress after each file and each part', async () => {
    const seen: number[] = [];
    await writeArchive(sourceOf(sampleInstance(10)), collector().out, { onProgress: (written) => seen.push(written.files) });
    expect(seen.filter((files) => files > 0)).toEqual([1, 2, 3, 4, 5, 5, 5, 5, 5]);
  });
});

describe('the reader', () => {
  it('gives back every part as written, ending with the manifest', async () => {
    const { parts, contents } = await partsOf(archive);
    const of = <K extends ArchivePart['kind']>(kind: K) => parts.filter((p): p is Extract<ArchivePart, { kind: K }> => p.kind === kind);
    expect(of('user').map((p) => p.user)).toEqual(sample.users);
    expect(of('app').map((p) => p.app)).toEqual(sample.apps);
    expect(of('bundle').map((p) => p.bundle)).toEqual(sample.bundles);
    expect(of('combinator').map((p) => p.combinator)).toEqual(sample.combinators);
    expect(of('debit').map((p) => p.debit)).toEqual(sample.debits);
    expect(of('link').map((p) => p.link)).toEqual(sample.links);
    expect(of('record').map((p) => p.record)).toEqual(sample.records);
    expect(of('activity').map((p) => p.activity)).toEqual(sample.activity);
    expect(of('file').map((p) => p.file)).toEqual(
      sample.files.map(({ bytes, ...f }) => (f.status === 'Completed' ? { ...f, size: bytes?.length } : f)),
    );
    expect(Object.fromEntries(contents)).toEqual(
      Object.fromEntries(sample.files.filter((f) => f.bytes).map((f) => [f.fileId, sha256(f.bytes as Buffer)])),
    );
    expect(parts.at(-1)).toEqual({ kind: 'end', manifest });
    expect(await verify(archive)).toEqual({ ok: true, manifest });
  });

  it('reads a version 1 archive, which has no activity or links section', async () => {
    const { parts } = await partsOf(await asVersion1(archive));
    expect(parts.filter((part) => part.kind === 'activity' || part.kind === 'link')).toEqual([]);
    expect(parts.filter((part) => part.kind === 'record')).toHaveLength(sample.records.length);
    const { activity: _activity, links: _links, ...counts } = manifest.counts;
    expect(parts.at(-1)).toMatchObject({ kind: 'end', manifest: { version: 1, counts } });
    expect((parts.at(-1) as { manifest: Manifest }).manifest.counts).not.toHaveProperty('activity');
  });

  it('checks the bytes of a file its consumer read only in part, or not at all', async () => {
    let end: ArchivePart | undefined;
    for await (const part of readArchive(once(archive))) {
      if (part.kind === 'file' && part.content && part.file.fileId === 'camerabeach.jpg') {
        for await (const _chunk of part.content) break;
      }
      end = part;
    }
    expect(end?.kind).toBe('end');
  });

  it('stops reading the source when its consumer stops', async () => {
    let pulled = 0;
    async function* counting(): AsyncGenerator<Buffer> {
      for (let offset = 0; offset < archive.length; offset += 4096) {
        pulled++;
        yield archive.subarray(offset, offset + 4096);
      }
    }
    for await (const part of readArchive(counting())) if (part.kind === 'user') break;
    expect(pulled).toBeLessThan(archive.length / 4096 / 2);
  });

  it('passes a failure of the source on as itself', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield archive.subarray(0, 5000);
      throw new Error('store connection reset');
    }
    await expect(verifyArchive(failing())).rejects.toThrow('store connection reset');
  });
});

describe('the reader refuses', () => {
  const replace = (name: string, data: Buffer | string) => (entries: TarEntry[]) =>
    entries.map((entry) => (entry.header.name === name ? { ...entry, data: Buffer.from(data) } : entry));
  const insertAfterMarker = (entry: TarEntry) => (entries: TarEntry[]) => [entries[0] as TarEntry, entry, ...entries.slice(1)];

  it('a byte altered in the compressed bytes of a file: the gzip checksum fails', async () => {
    // Random bytes are stored, not compressed: a slice of the file appears as such in the gzip stream.
    const large = sample.files[0]?.bytes as Buffer;
    const at = archive.indexOf(large.subarray(2_000_000, 2_000_032));
    expect(at).toBeGreaterThan(0);
    const altered = Buffer.from(archive);
    altered[at + 5]! ^= 0x40;
    expect(await verify(altered)).toMatchObject({
      ok: false,
      problem: 'corrupt',
      message: expect.stringContaining('incorrect data check'),
    });
  });

  it('an entry altered and the archive compressed again: gzip is sound, the hash is not', async () => {
    const entries = await entriesOf(archive);
    const records = entries.find((e) => e.header.name === 'records/00000001.ndjson') as TarEntry;
    const altered = await edited(archive, replace('records/00000001.ndjson', records.data.toString().replace('hello', 'HELLO')));
    expect(await verify(altered)).toMatchObject({ ok: false, problem: 'hash-mismatch', path: 'records/00000001.ndjson' });
  });

  it('an altered gzip trailer (CRC-32), checked after the manifest', async () => {
    const altered = Buffer.from(archive);
    altered[altered.length - 6]! ^= 1;
    expect(await verify(altered)).toMatchObject({ ok: false, problem: 'corrupt' });
  });

  it('an archive cut short, anywhere', async () => {
    for (const length of [100, Math.floor(archive.length / 2), archive.length - 4]) {
      expect(await verify(archive.subarray(0, length))).toMatchObject({ ok: false, problem: 'truncated' });
    }
  });

  it('an archive whose manifest is missing', async () => {
    expect(await verify(await edited(archive, (entries) => entries.slice(0, -1)))).toMatchObject({ ok: false, problem: 'truncated' });
  });

  it('a newer format version, at its first entry', async () => {
    const newer = await edited(archive, replace('pds-export.json', JSON.stringify({ format: 'pds-export', version: 4 })));
    expect(await verify(newer)).toEqual({
      ok: false,
      problem: 'unsupported-version',
      path: 'pds-export.json',
      message: 'pds-export.json: is version 4; this reader reads versions 1, 2 and 3',
    });
  });

  it('a newer section in a version 1 archive, and a manifest of another version than the marker', async () => {
    const v1 = await edited(archive, replace('pds-export.json', '{"format":"pds-export","version":1}'));
    expect(await verify(v1)).toMatchObject({ ok: false, problem: 'unexpected-path', path: 'links/00000001.ndjson' });
    const mixed = await edited(await asVersion1(archive), (entries) => {
      const last = entries.at(-1) as TarEntry;
      const listed = JSON.parse(last.data.toString()) as Manifest;
      return [...entries.slice(0, -1), { ...last, data: Buffer.from(JSON.stringify({ ...listed, version: 2 })) }];
    });
    expect(await verify(mixed)).toMatchObject({ ok: false, problem: 'unsupported-version', path: 'manifest.json' });
  });

  it('a links section in a version 2 archive', async () => {
    const v2 = await edited(archive, replace('pds-export.json', '{"format":"pds-export","version":2}'));
    expect(await verify(v2)).toMatchObject({ ok: false, problem: 'unexpected-path', path: 'links/00000001.ndjson' });
  });

  it('a link that names a file the archive does not hold, or carries a secret', async () => {
    const [first, second] = sample.links as [Sample['links'][number], Sample['links'][number]];
    const lines = (...links: object[]) => links.map((link) => `${JSON.stringify(link)}\n`).join('');
    const stray = await edited(archive, replace('links/00000001.ndjson', lines(first, { ...second, fileIds: ['elsewhere.bin'] })));
    expect(await verify(stray)).toMatchObject({
      ok: false,
      problem: 'unknown-reference',
      path: 'links/00000001.ndjson line 2',
      message: 'links/00000001.ndjson line 2: names file elsewhere.bin, which is not in the archive',
    });
    const secret = await edited(
      archive,
      replace('links/00000001.ndjson', lines({ ...first, token: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, second)),
    );
    expect(await verify(secret)).toMatchObject({ ok: false, problem: 'invalid-entry', path: 'links/00000001.ndjson line 1' });
  });

  it('a marker with fields version 2 does not define', async () => {
    const marked = await edited(archive, replace('pds-export.json', '{"format":"pds-export","version":2,"signedBy":"me"}'));
    expect(await verify(marked)).toMatchObject({ ok: false, problem: 'invalid-entry', path: 'pds-export.json' });
  });

  it('what is not an export: another tar.gz, or no gzip at all', async () => {
    expect(await verify(await edited(archive, () => [file('notes.txt', 'hi')]))).toMatchObject({ ok: false, problem: 'not-an-export' });
    expect(await verify(await edited(archive, replace('pds-export.json', '{"format":"other","version":1}')))).toMatchObject({
      ok: false,
      problem: 'not-an-export',
    });
    expect(await verify(Buffer.from('just some text, not gzip'))).toMatchObject({ ok: false, problem: 'corrupt' });
  });

  it.each(['../evil.txt', '/etc/passwd', 'files/../../x.bin', './users/00000001.ndjson', 'files/1.bin', 'users/00000001.json'])(
    'a path outside the format: %s',
    async (name) => {
      expect(await verify(await edited(archive, insertAfterMarker(file(name, 'x'))))).toMatchObject({
        ok: false,
        problem: 'unexpected-path',
        path: name,
      });
    },
  );

  it('an entry that is no regular file', async () => {
    const link: TarEntry = {
      header: { name: 'users/00000001.ndjson', type: 'symlink', linkname: '/etc/passwd', mode: 0o777 },
      data: Buffer.alloc(0),
    };
    expect(await verify(await edited(archive, (entries) => [entries[0] as TarEntry, link]))).toMatchObject({
      ok: false,
      problem: 'unexpected-entry',
      path: 'users/00000001.ndjson',
    });
  });

  it('an entry twice, and an id twice', async () => {
    const twice = await edited(archive, (entries) => [...entries.slice(0, 2), entries[1] as TarEntry, ...entries.slice(2)]);
    expect(await verify(twice)).toMatchObject({ ok: false, problem: 'duplicate', path: 'users/00000001.ndjson' });
    const sameId = sampleInstance(10);
    (sameId.files[1] as { fileId: string }).fileId = 'camerabeach.jpg';
    expect(await verify((await archiveOf(sameId)).archive)).toMatchObject({ ok: false, problem: 'duplicate', path: 'files/00000002.json' });
  });

  it('entries out of order, and the bytes of a Completed file missing', async () => {
    const swapped = await edited(archive, (entries) => [
      ...entries.slice(0, -3),
      entries.at(-2) as TarEntry,
      entries.at(-3) as TarEntry,
      entries.at(-1) as TarEntry,
    ]);
    expect(await verify(swapped)).toMatchObject({ ok: false, problem: 'out-of-order', path: 'records/00000002.ndjson' });
    const noBytes = await edited(archive, (entries) => entries.filter((e) => e.header.name !== 'files/00000002.bin'));
    expect(await verify(noBytes)).toMatchObject({ ok: false, problem: 'missing-entry', path: 'files/00000003.json' });
  });

  it('a part the manifest lists but the archive lacks', async () => {
    const dropped = await edited(archive, (entries) => entries.filter((e) => e.header.name !== 'records/00000002.ndjson'));
    // The comment record is gone, so the post's link to it resolves nowhere: found before the manifest is read.
    expect(await verify(dropped)).toMatchObject({ ok: false, problem: 'unknown-reference', path: 'records/00000001.ndjson line 1' });
    const droppedBundle = await edited(archive, (entries) => entries.filter((e) => e.header.name !== 'apps/00000001.ndjson'));
    expect(await verify(droppedBundle)).toMatchObject({ ok: false, problem: 'manifest-mismatch', path: 'manifest.json' });
  });

  it('counts that differ from what the archive holds', async () => {
    const entries = await entriesOf(archive);
    const wrong = { ...manifest, counts: { ...manifest.counts, records: 4 } };
    const altered = await withManifest(entries.slice(0, -1), wrong);
    expect(await verify(altered)).toMatchObject({
      ok: false,
      problem: 'count-mismatch',
      message: 'manifest.json: counts 4 records, the archive holds 3',
    });
    const noActivity = await withManifest(entries.slice(0, -1), { ...manifest, counts: { ...manifest.counts, activity: 0 } });
    expect(await verify(noActivity)).toMatchObject({
      ok: false,
      problem: 'count-mismatch',
      message: expect.stringContaining('0 activity'),
    });
  });

  it('a username, bundle or record that the archive does not hold', async () => {
    const stranger = sampleInstance(10);
    stranger.files[1]?.permissions.push({ username: 'mallory', contentReadable: true });
    expect(await verify((await archiveOf(stranger)).archive)).toMatchObject({
      ok: false,
      problem: 'unknown-reference',
      message: 'files/00000002.json: names user mallory, who is not in the archive',
    });
    const ghost = sampleInstance(10);
    (ghost.activity[0] as { actor: { username?: string } }).actor.username = 'mallory';
    expect(await verify((await archiveOf(ghost)).archive)).toMatchObject({
      ok: false,
      problem: 'unknown-reference',
      path: 'activity/00000001.ndjson line 1',
    });
    const noBundle = sampleInstance(10);
    (noBundle.debits[0]?.permissions[0] as { bundleName: string }).bundleName = 'gone';
    expect(await verify((await archiveOf(noBundle)).archive)).toMatchObject({
      ok: false,
      problem: 'unknown-reference',
      path: 'debits/00000001.ndjson line 1',
    });
  });

  it('lines that do not fit their schema, naming the line', async () => {
    const entries = await entriesOf(archive);
    const users = (entries[1] as TarEntry).data.toString().replace('"kind":"user"', '"kind":"admin"');
    const altered = await withManifest(entries.slice(0, -1).map((e, i) => (i === 1 ? { ...e, data: Buffer.from(users) } : e)));
    expect(await verify(altered)).toMatchObject({ ok: false, problem: 'invalid-entry', path: 'users/00000001.ndjson line 2' });
  });

  it('anything after the manifest', async () => {
    const after = await edited(archive, (entries) => [...entries, file('users/00000002.ndjson', '{}\n')]);
    expect(await verify(after)).toMatchObject({ ok: false, problem: 'unexpected-entry', path: 'users/00000002.ndjson' });
  });

  it('entries over the configured limits, before reading them', async () => {
    expect(await verify(archive, { maxFileBytes: 1024 * 1024 })).toMatchObject({
      ok: false,
      problem: 'oversized',
      path: 'files/00000001.bin',
    });
    expect(await verify(archive, { maxJsonBytes: 100 })).toMatchObject({ ok: false, problem: 'oversized', path: 'users/00000001.ndjson' });
    expect(await verify(archive, { maxEntries: 6 })).toMatchObject({ ok: false, problem: 'oversized', path: 'files/00000001.json' });
    expect(await verify(archive, { maxTotalBytes: 1024 * 1024 })).toMatchObject({ ok: false, problem: 'oversized' });
  });

  it('a gzip bomb, at the total limit', async () => {
    // 64 MiB of zeros compress to ≈ 64 KiB.
    const bomb = await tarGz([
      file('pds-export.json', '{"format":"pds-export","version":1}'),
      file('users/00000001.ndjson', Buffer.alloc(64 * 1024 * 1024)),
    ]);
    expect(bomb.length).toBeLessThan(256 * 1024);
    expect(await verify(bomb, { maxTotalBytes: 8 * 1024 * 1024 })).toMatchObject({ ok: false, problem: 'oversized' });
  });
});

/** A .tar.gz of `entries` then a manifest: `value`, or the sample's listing these entries. */
function withManifest(entries: TarEntry[], value?: unknown): Promise<Buffer> {
  const listing = entries.map(({ header, data }) => ({ path: header.name, size: data.length, sha256: sha256(data) }));
  return tarGz([...entries, file('manifest.json', JSON.stringify(value ?? { ...manifest, entries: listing }))]);
}

describe('the manifest JSON Schema (docs/export-manifest.schema.json)', () => {
  const ajv = addFormats(new Ajv2020({ strict: true, allErrors: true }));

  it('is the one generated from the format (UPDATE_EXPORT_SCHEMA=1 rewrites it; then run prettier on it)', () => {
    if (process.env.UPDATE_EXPORT_SCHEMA) writeFileSync(SCHEMA_FILE, `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`);
    expect(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))).toEqual(manifestJsonSchema());
  });

  it('accepts the manifests the writer writes, and refuses altered ones', () => {
    const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as object);
    expect(validate(manifest)).toBe(true);
    const { counts: _counts, ...noCounts } = manifest;
    for (const bad of [
      { ...manifest, version: '1' },
      { ...manifest, version: 4 },
      noCounts,
      { ...manifest, createdAt: 'yesterday' },
      { ...manifest, entries: [{ path: 'x', size: 1, sha256: 'not-hex' }] },
      { ...manifest, counts: { ...manifest.counts, files: -1 } },
      { ...manifest, passwordHash: 'x' },
    ]) {
      expect(validate(bad)).toBe(false);
    }
  });
});

describe('plain tools (GNU tar), as docs/export-format.md describes', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(process.env.TEST_DATA_DIR ?? os.tmpdir(), 'export-tar-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('list and extract an archive the writer wrote, whose entries then match the manifest', () => {
    const archiveFile = path.join(dir, 'written.tar.gz');
    writeFileSync(archiveFile, archive);
    const listed = execFileSync('tar', ['-tzf', archiveFile], { encoding: 'utf8' }).trim().split('\n');
    expect(listed).toEqual([...manifest.entries.map((entry) => entry.path), 'manifest.json']);
    const out = path.join(dir, 'extracted');
    mkdirSync(out);
    execFileSync('tar', ['-xzf', archiveFile, '-C', out]);
    for (const entry of manifest.entries) expect(sha256(readFileSync(path.join(out, entry.path)))).toBe(entry.sha256);
  });

  it('write an archive the reader accepts, from a folder and a list of its files in archive order', async () => {
    const folder = path.join(dir, 'by-hand');
    const write = (name: string, data: Buffer | string) => {
      mkdirSync(path.dirname(path.join(folder, name)), { recursive: true });
      writeFileSync(path.join(folder, name), data);
      return { path: name, size: Buffer.byteLength(data), sha256: sha256(Buffer.from(data)) };
    };
    const photo = Buffer.from('not really a photo');
    const entries = [
      write('pds-export.json', '{"format":"pds-export","version":1}'),
      write('users/00000001.ndjson', '{"username":"carol","kind":"owner","state":"active","createdAt":"2026-01-01T00:00:00.000Z"}\n'),
      write(
        'files/00000001.json',
        JSON.stringify({
          fileId: 'photo.jpg',
          name: 'photo.jpg',
          source: 'phone',
          tags: [],
          dateCreated: '2026-01-01T00:00:00.000Z',
          lastUpdated: '2026-01-01T00:00:00.000Z',
          status: 'Completed',
          size: photo.length,
          contentPublic: false,
          permissions: [{ username: 'carol', contentReadable: true }],
        }),
      ),
      write('files/00000001.bin', photo),
    ];
    const counts = { users: 1, apps: 0, bundles: 0, combinators: 0, debits: 0, files: 1, fileBytes: photo.length, records: 0 };
    write(
      'manifest.json',
      JSON.stringify({
        format: 'pds-export',
        version: 1,
        instance: 'carol.other.example',
        createdAt: '2026-01-02T00:00:00.000Z',
        counts,
        entries,
      }),
    );
    writeFileSync(path.join(dir, 'list'), [...entries.map((e) => e.path), 'manifest.json'].join('\n'));
    const archiveFile = path.join(dir, 'by-hand.tar.gz');
    execFileSync('tar', ['--format=ustar', '--no-recursion', '-czf', archiveFile, '-C', folder, '-T', path.join(dir, 'list')]);
    expect(await verifyArchive(once(readFileSync(archiveFile)))).toMatchObject({
      ok: true,
      manifest: { instance: 'carol.other.example', counts },
    });
  });
});
