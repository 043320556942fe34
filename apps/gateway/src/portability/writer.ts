// Writes an export archive (format.ts) as a stream: entries go out as they are produced, each file's bytes
// straight from the store into the tar, hashed on the way. Nothing is held whole but one NDJSON part
// (about PART_BYTES) and the manifest's list of entries; nothing touches the local disk.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack as tarPack, type Pack } from 'tar-stream';

/** One entry being written (tar-stream does not export its type). */
type Sink = ReturnType<Pack['entry']>;
import type { BlobStore, StoredBlob } from '@pds/storage';
import {
  FORMAT,
  MANIFEST_PATH,
  MARKER_PATH,
  MAX_ENTRY_NUMBER,
  PART_SCHEMAS,
  VERSION,
  fileContentPath,
  fileMetadataPath,
  fileSchema,
  noCounts,
  partPath,
  type Counts,
  type ExportActivity,
  type ExportApp,
  type ExportBundle,
  type ExportCombinator,
  type ExportDebit,
  type ExportFile,
  type ExportLink,
  type ExportRecord,
  type ExportUser,
  type Manifest,
  type ManifestEntry,
  type PartSection,
} from './format';

/** An NDJSON part is closed once it holds this many bytes (so at most this plus one line). */
const PART_BYTES = 1024 * 1024;
/** gzip's default, as `tar -czf` uses: the archive comes out as small as tar's (node's zlib is still the faster of the two). */
const DEFAULT_LEVEL = 6;

export interface FileToExport {
  file: Omit<ExportFile, 'size'>;
  /** Completed files only: opens the bytes, when the writer reaches the file (one is open at a time). */
  content?: () => Promise<StoredBlob | null>;
}

/** The instance's parts, each read once, in order. */
export interface ExportSource {
  instance: string;
  createdAt: Date;
  users: AsyncIterable<ExportUser>;
  apps: AsyncIterable<ExportApp>;
  bundles: AsyncIterable<ExportBundle>;
  combinators: AsyncIterable<ExportCombinator>;
  debits: AsyncIterable<ExportDebit>;
  files: AsyncIterable<FileToExport>;
  /** The share links, without their secrets (not restored by an import). */
  links: AsyncIterable<ExportLink>;
  /** Best ordered by table: a part never mixes two tables, so each change of table closes one. */
  records: AsyncIterable<ExportRecord>;
  /** The owner's activity log as the instance still keeps it (not restored by an import). */
  activity: AsyncIterable<ExportActivity>;
}

export interface ArchiveOptions {
  /** gzip level, 1 (fastest) to 9. */
  level?: number;
  /** After each file and each NDJSON part: what is written so far. */
  onProgress?: (written: Counts) => void;
}

/** Writes the archive of `source` to `out` and answers its manifest; on failure `out` is destroyed with the error. */
export async function writeArchive(source: ExportSource, out: Writable, options: ArchiveOptions = {}): Promise<Manifest> {
  const pack = tarPack();
  const piping = pipeline(pack, createGzip({ level: options.level ?? DEFAULT_LEVEL }), out);
  // Awaited below on every path; until then a failure must not count as unhandled.
  piping.catch(() => undefined);
  try {
    const manifest = await fill(new Entries(pack, source.createdAt), source, options);
    pack.finalize();
    await piping;
    return manifest;
  } catch (error) {
    pack.destroy(error as Error);
    // The first failure is the cause: the source's (passed on to the pipeline above) or the output's.
    throw await piping.then(
      () => error,
      (failure: unknown) => failure,
    );
  }
}

/**
 * Streams the archive of `source` into the store under `key`; answers its manifest and stored size. When
 * either side fails, nothing is stored and the first failure is thrown once both have stopped.
 */
export async function storeArchive(
  store: Pick<BlobStore, 'write'>,
  key: string,
  source: ExportSource,
  options: ArchiveOptions = {},
): Promise<{ manifest: Manifest; bytes: number }> {
  const archive = new PassThrough();
  const [written, stored] = await Promise.allSettled([
    writeArchive(source, archive, options),
    store.write(key, archive, { contentType: 'application/gzip' }),
  ]);
  if (written.status === 'rejected') throw written.reason;
  if (stored.status === 'rejected') throw stored.reason;
  return { manifest: written.value, bytes: stored.value };
}

async function fill(entries: Entries, source: ExportSource, options: ArchiveOptions): Promise<Manifest> {
  const counts: Counts = noCounts();
  const progress = () => options.onProgress?.({ ...counts });
  await entries.add(MARKER_PATH, json({ format: FORMAT, version: VERSION }));
  counts.users = await writeParts(entries, 'users', source.users, progress);
  counts.apps = await writeParts(entries, 'apps', source.apps, progress);
  counts.bundles = await writeParts(entries, 'bundles', source.bundles, progress);
  counts.combinators = await writeParts(entries, 'combinators', source.combinators, progress);
  counts.debits = await writeParts(entries, 'debits', source.debits, progress);
  for await (const { file, content } of source.files) {
    const n = numberOf(++counts.files, 'files');
    const blob = file.status === 'Completed' ? await content?.() : null;
    if (blob === undefined) throw new Error(`file ${file.fileId} is Completed but its bytes are not in the store`);
    try {
      await entries.add(fileMetadataPath(n), json(fileSchema.parse(blob ? { ...file, size: blob.size } : file)));
      if (blob) await entries.addStream(fileContentPath(n), blob.size, blob.stream);
    } finally {
      // Read to the end on success; on failure its open file or connection must not wait for GC.
      blob?.stream.destroy();
    }
    counts.fileBytes += blob?.size ?? 0;
    progress();
  }
  counts.links = await writeParts(entries, 'links', source.links, progress);
  counts.records = await writeParts(entries, 'records', source.records, progress, (record) => `${record.namespace}/${record.endpoint}`);
  counts.activity = await writeParts(entries, 'activity', source.activity, progress);
  const manifest: Manifest = {
    format: FORMAT,
    version: VERSION,
    instance: source.instance,
    createdAt: source.createdAt.toISOString(),
    counts,
    entries: entries.written,
  };
  await entries.addLast(MANIFEST_PATH, json(manifest));
  return manifest;
}

/** Writes `items` as NDJSON parts of `section`, a new part at PART_BYTES or when `groupOf` changes; how many. */
async function writeParts<T>(
  entries: Entries,
  section: PartSection,
  items: AsyncIterable<T>,
  progress: () => void,
  groupOf?: (item: T) => string,
): Promise<number> {
  const schema = PART_SCHEMAS[section];
  let lines: Buffer[] = [];
  let bytes = 0;
  let parts = 0;
  let count = 0;
  let group: string | undefined;
  const close = async () => {
    if (lines.length === 0) return;
    await entries.add(partPath(section, numberOf(++parts, section)), Buffer.concat(lines, bytes));
    lines = [];
    bytes = 0;
    progress();
  };
  for await (const item of items) {
    const parsed = schema.safeParse(item);
    if (!parsed.success) throw new Error(`${section}[${count}] does not fit the export format: ${parsed.error.message}`);
    const itemGroup = groupOf?.(item);
    if (itemGroup !== group) await close();
    group = itemGroup;
    const line = Buffer.from(`${JSON.stringify(parsed.data)}\n`);
    lines.push(line);
    bytes += line.length;
    count++;
    if (bytes >= PART_BYTES) await close();
  }
  await close();
  return count;
}

function numberOf(n: number, section: string): number {
  if (n > MAX_ENTRY_NUMBER) throw new Error(`more than ${MAX_ENTRY_NUMBER} entries in ${section}`);
  return n;
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

/** The tar side: one entry at a time, each hashed and listed for the manifest. */
class Entries {
  /** Every entry written so far, in order (the manifest's list). */
  readonly written: ManifestEntry[] = [];

  constructor(
    private readonly pack: Pack,
    private readonly mtime: Date,
  ) {}

  /** Resolves once the entry is in the tar stream: waits for the reader of the archive (backpressure). */
  async add(path: string, bytes: Buffer): Promise<void> {
    await this.entry(path, bytes.length, (sink) => sink.end(bytes));
    this.written.push({ path, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
  }

  /** The manifest: it lists the entries before it, not itself. */
  async addLast(path: string, bytes: Buffer): Promise<void> {
    await this.entry(path, bytes.length, (sink) => sink.end(bytes));
  }

  /** An entry of `size` bytes from `chunks`, which must bring exactly that many. */
  async addStream(path: string, size: number, chunks: AsyncIterable<Buffer>): Promise<void> {
    const hash = createHash('sha256');
    await this.entry(path, size, async (sink, done) => {
      let count = 0;
      for await (const chunk of chunks) {
        count += chunk.length;
        // A longer source would overrun the size already in the tar header.
        if (count > size) break;
        hash.update(chunk);
        if (!sink.write(chunk)) await Promise.race([once(sink, 'drain'), done]);
      }
      if (count !== size) throw new Error(`${path}: the store gave ${count > size ? 'more' : 'fewer'} bytes than its size, ${size}`);
      sink.end(null);
    });
    this.written.push({ path, size, sha256: hash.digest('hex') });
  }

  private async entry(path: string, size: number, write: (sink: Sink, done: Promise<void>) => unknown): Promise<void> {
    let sink!: Sink;
    const done = new Promise<void>((resolve, reject) => {
      sink = this.pack.entry({ name: path, size, mtime: this.mtime, mode: 0o644, type: 'file' }, (error) =>
        error ? reject(error) : resolve(),
      );
    });
    // The entry's failure is the pack's and reaches the caller through `done`: no 'error' event may go unheard.
    sink.on('error', () => undefined);
    done.catch(() => undefined);
    await write(sink, done);
    await done;
  }
}
