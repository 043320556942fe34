// Reads an export archive (format.ts) as a stream and checks all of it: gzip and tar framing, the closed
// path grammar and entry order, limits, each entry's content (contents.ts), and at the end every entry's
// size and SHA-256 against the manifest. Nothing in it is trusted before it has been counted.
//
// The manifest comes last (its hashes exist only once the bytes have streamed), so a reader knows the
// archive is whole and untampered only when it reaches the end. An importer therefore reads a stored
// archive twice: `verifyArchive` first, changing nothing; then `readArchive` to restore, which checks all
// of it again (the stored bytes could have changed meanwhile) and yields `end` only when they still hold.
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract as tarExtract, type Extract } from 'tar-stream';
import { ContentsCheck, parseJson, type PartItem } from './contents';
import {
  FORMAT,
  MANIFEST_PATH,
  MARKER_PATH,
  READABLE_VERSIONS,
  SECTION_SINCE,
  isReadableVersion,
  manifestSchema,
  markerSchema,
  parseEntryPath,
  type EntryName,
  type ExportFile,
  type Manifest,
  type ManifestEntry,
  type Version,
} from './format';
import { ArchiveError, type Problem } from './problems';

export interface ReadLimits {
  /** Bytes of one file's content. */
  maxFileBytes: number;
  /** Bytes of any other entry (metadata, an NDJSON part, the manifest): the reader holds these whole. */
  maxJsonBytes: number;
  maxEntries: number;
  /** Bytes of the whole tar, uncompressed: where a gzip bomb stops. */
  maxTotalBytes: number;
}

export const DEFAULT_READ_LIMITS: ReadLimits = {
  maxFileBytes: 5 * 1024 ** 3,
  maxJsonBytes: 64 * 1024 ** 2,
  maxEntries: 1_000_000,
  maxTotalBytes: 1024 ** 4,
};

export type ArchivePart =
  | PartItem
  /** `content` (Completed files only) must be read, or abandoned, before the next part is asked for. */
  | { kind: 'file'; file: ExportFile; content: AsyncIterable<Buffer> | null }
  /** Last, once everything has been checked: the archive is whole and matches its manifest. */
  | { kind: 'end'; manifest: Manifest };

export type ArchiveReport = { ok: true; manifest: Manifest } | { ok: false; problem: Problem; path?: string; message: string };

/** Reads the whole archive, changing nothing: its manifest, or the first problem found. */
export async function verifyArchive(source: AsyncIterable<Buffer>, limits: ReadLimits = DEFAULT_READ_LIMITS): Promise<ArchiveReport> {
  try {
    for await (const part of readArchive(source, limits)) if (part.kind === 'end') return { ok: true, manifest: part.manifest };
    throw new Error('an archive read ended without its end');
  } catch (error) {
    if (!(error instanceof ArchiveError)) throw error;
    return { ok: false, problem: error.problem, ...(error.path ? { path: error.path } : {}), message: error.message };
  }
}

/**
 * The parts of the archive in order, ending with `end`; throws ArchiveError at the first problem, and
 * the source's own error (a store that failed) unchanged.
 */
export async function* readArchive(source: AsyncIterable<Buffer>, limits: ReadLimits = DEFAULT_READ_LIMITS): AsyncGenerator<ArchivePart> {
  const extract = tarExtract();
  const feeding = pipeline(sourceOf(source), createGunzip(), totalLimit(limits.maxTotalBytes), extract);
  // Awaited below on every path; until then a failure must not count as unhandled.
  feeding.catch(() => undefined);
  try {
    const read = yield* entriesOf(extract, limits);
    // The gzip trailer (CRC-32 and length) is checked once the stream has ended; the manifest after it, so
    // that damaged bytes are always reported as such (`corrupt`), and a `hash-mismatch` means bytes that
    // were altered and compressed again.
    await feeding;
    if (!read) throw new ArchiveError('truncated', `the archive ends before its manifest (${MANIFEST_PATH})`);
    read.contents.finish();
    yield { kind: 'end', manifest: checkManifest(read) };
  } catch (error) {
    if (error instanceof ArchiveError) throw error;
    // A failure of the pipeline reaches the loop as the extractor's: the pipeline's own names its cause.
    extract.destroy(error as Error);
    throw explain(
      await feeding.then(
        () => error,
        (failure: unknown) => failure,
      ),
    );
  } finally {
    // A consumer that stopped early, or a problem found: stop reading the source.
    extract.destroy();
    await feeding.catch(() => undefined);
  }
}

const STAGES = [
  'marker',
  'users',
  'apps',
  'bundles',
  'combinators',
  'debits',
  'files',
  'links',
  'records',
  'activity',
  'manifest',
] as const;

function stageOf(name: EntryName): number {
  if (name.kind === 'part') return STAGES.indexOf(name.section);
  if (name.kind === 'file-metadata' || name.kind === 'file-content') return STAGES.indexOf('files');
  return STAGES.indexOf(name.kind);
}

interface EntriesRead {
  /** The version the marker names. */
  version: Version;
  /** The manifest as read, not checked yet. */
  manifest: unknown;
  /** Every entry before it, as counted. */
  seen: ManifestEntry[];
  contents: ContentsCheck;
}

/** The parts of every entry, checked one by one; then what the manifest must be checked against, or null without one. */
async function* entriesOf(extract: Extract, limits: ReadLimits): AsyncGenerator<ArchivePart, EntriesRead | null> {
  const contents = new ContentsCheck();
  /** Every entry so far, as counted: what the manifest must list. */
  const seen: ManifestEntry[] = [];
  let stage = -1;
  /** The last number of each stage (marker and manifest count as 1). */
  const lastNumber = new Map<number, number>();
  /** A Completed file whose content entry must come next. */
  let awaited: { n: number; file: ExportFile } | null = null;
  let manifest: unknown = undefined;
  let version: Version = READABLE_VERSIONS[0];

  for await (const entry of extract) {
    const { name: path, size: declared, type } = entry.header;
    // tar-stream types an entry's chunks as unknown; in Node they are Buffers.
    const body = entry as AsyncIterable<Buffer>;
    if (manifest !== undefined) throw new ArchiveError('unexpected-entry', `nothing may follow ${MANIFEST_PATH}`, path);
    if (seen.length >= limits.maxEntries) throw new ArchiveError('oversized', `more than ${limits.maxEntries} entries`, path);
    const name = parseEntryPath(path);
    if (stage === -1 && name?.kind !== 'marker')
      throw new ArchiveError('not-an-export', `the first entry is ${path}, not ${MARKER_PATH}`, path);
    if (!name) throw new ArchiveError('unexpected-path', 'is no path of the format', path);
    if (name.kind === 'part' && version < (SECTION_SINCE[name.section] ?? 1))
      throw new ArchiveError('unexpected-path', `is no path of format version ${version}`, path);
    if (type !== 'file') throw new ArchiveError('unexpected-entry', `is a ${type}, not a regular file`, path);

    // Order: stages in turn (a stage may be empty), numbers one up from 1 within a stage, and the content
    // of a Completed file right after its metadata. Any number not above the last of its stage was seen.
    const entryStage = stageOf(name);
    const n = 'n' in name ? name.n : 1;
    const last = lastNumber.get(entryStage) ?? 0;
    if (name.kind === 'file-content') {
      if (awaited?.n !== n)
        throw new ArchiveError(n <= last ? 'duplicate' : 'unexpected-entry', 'follows no metadata of a Completed file', path);
    } else {
      if (awaited) throw new ArchiveError('missing-entry', `the content of Completed file ${awaited.file.fileId} must come before`, path);
      if (entryStage < stage || n !== last + 1)
        throw new ArchiveError(n <= last ? 'duplicate' : 'out-of-order', n <= last ? 'appears twice' : 'is out of order', path);
      lastNumber.set(entryStage, n);
      stage = entryStage;
    }

    const limit = name.kind === 'file-content' ? limits.maxFileBytes : limits.maxJsonBytes;
    if (declared > limit) throw new ArchiveError('oversized', `holds ${declared} bytes, over the limit of ${limit}`, path);

    if (name.kind === 'file-content') {
      const { file } = awaited as { file: ExportFile };
      awaited = null;
      const counted = countedContent(body);
      yield { kind: 'file', file, content: counted.content };
      // Whatever the consumer read of it, the rest is read (and hashed) here.
      const { size, sha256 } = await counted.drain();
      if (size !== file.size) throw new ArchiveError('size-mismatch', `holds ${size} bytes, its metadata says ${file.size}`, path);
      seen.push({ path, size, sha256 });
      continue;
    }

    const bytes = await whole(body, limit, path);
    const counted = { path, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    switch (name.kind) {
      case 'marker':
        version = checkMarker(parseJson(bytes, path), path);
        break;
      case 'part':
        yield* contents.part(name.section, bytes, path);
        break;
      case 'file-metadata': {
        const file = contents.file(bytes, path);
        if (file.status === 'Completed') awaited = { n: name.n, file };
        else yield { kind: 'file', file, content: null };
        break;
      }
      case 'manifest':
        manifest = parseJson(bytes, path);
        continue;
    }
    seen.push(counted);
  }
  return manifest === undefined ? null : { version, manifest, seen, contents };
}

/** The archive's version, once the marker is found to be one this reader reads. */
function checkMarker(marker: unknown, path: string): Version {
  const { format, version } = (marker ?? {}) as { format?: unknown; version?: unknown };
  if (format !== FORMAT) throw new ArchiveError('not-an-export', `names format ${JSON.stringify(format)}, not ${FORMAT}`, path);
  if (!isReadableVersion(version)) {
    const readable = `${READABLE_VERSIONS.slice(0, -1).join(', ')} and ${READABLE_VERSIONS.at(-1)}`;
    throw new ArchiveError('unsupported-version', `is version ${JSON.stringify(version)}; this reader reads versions ${readable}`, path);
  }
  if (!markerSchema.safeParse(marker).success) throw new ArchiveError('invalid-entry', 'holds fields besides format and version', path);
  return version;
}

function checkManifest({ version: expected, manifest: value, seen, contents }: EntriesRead): Manifest {
  const version = (value as { version?: unknown } | null)?.version;
  if (version !== expected)
    throw new ArchiveError(
      'unsupported-version',
      `is version ${JSON.stringify(version)}, not ${expected} as the marker says`,
      MANIFEST_PATH,
    );
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ArchiveError('invalid-entry', `${issue?.path.join('.') || 'the manifest'}: ${issue?.message}`, MANIFEST_PATH);
  }
  const manifest = parsed.data;
  for (let i = 0; i < Math.max(seen.length, manifest.entries.length); i++) {
    const listed = manifest.entries[i];
    const found = seen[i];
    if (!listed || !found || listed.path !== found.path) {
      const what = !found
        ? `lists ${listed?.path}, which the archive lacks`
        : `lists ${listed?.path ?? 'nothing'} where the archive has ${found.path}`;
      throw new ArchiveError('manifest-mismatch', what, MANIFEST_PATH);
    }
    if (listed.size !== found.size)
      throw new ArchiveError('size-mismatch', `holds ${found.size} bytes, the manifest says ${listed.size}`, found.path);
    if (listed.sha256 !== found.sha256) throw new ArchiveError('hash-mismatch', `its SHA-256 is not the one in the manifest`, found.path);
  }
  for (const [kind, count] of Object.entries(contents.counts) as [keyof Manifest['counts'], number][]) {
    // An older manifest has no count of a newer section: its archive has none of it either.
    if ((manifest.counts[kind] ?? 0) !== count) {
      throw new ArchiveError('count-mismatch', `counts ${manifest.counts[kind]} ${kind}, the archive holds ${count}`, MANIFEST_PATH);
    }
  }
  return manifest;
}

/** The bytes of an entry of at most `limit` bytes. */
async function whole(entry: AsyncIterable<Buffer>, limit: number, path: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of entry) {
    size += chunk.length;
    if (size > limit) throw new ArchiveError('oversized', `holds more than the limit of ${limit} bytes`, path);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/**
 * A content entry for the consumer to read, counted and hashed as it passes; `drain` reads what the
 * consumer left. One iterator over the entry: a consumer that stops early must not end it (that would
 * end the whole extraction).
 */
function countedContent(entry: AsyncIterable<Buffer>) {
  const chunks = entry[Symbol.asyncIterator]();
  const hash = createHash('sha256');
  let size = 0;
  let ended = false;
  const next = async (): Promise<Buffer | null> => {
    if (ended) return null;
    const { value, done } = await chunks.next();
    if (done) {
      ended = true;
      return null;
    }
    size += value.length;
    hash.update(value);
    return value;
  };
  return {
    content: (async function* () {
      for (let chunk = await next(); chunk; chunk = await next()) yield chunk;
    })(),
    drain: async () => {
      while (await next());
      return { size, sha256: hash.digest('hex') };
    },
  };
}

/** Errors of the source, marked so they pass through as themselves (not an archive's problem). */
class SourceFailure extends Error {
  constructor(readonly original: unknown) {
    super('the archive source failed');
  }
}

async function* sourceOf(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  try {
    yield* source;
  } catch (error) {
    throw new SourceFailure(error);
  }
}

/** Counts the uncompressed bytes; refuses past `max`. */
function totalLimit(max: number): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      total += chunk.length;
      if (total > max) callback(new ArchiveError('oversized', `the archive holds more than the limit of ${max} bytes`));
      else callback(null, chunk);
    },
  });
}

/** What a failure of the gunzip → tar pipeline means for the archive. */
function explain(failure: unknown): unknown {
  if (failure instanceof ArchiveError) return failure;
  if (failure instanceof SourceFailure) return failure.original;
  const { code, message } = failure as { code?: string; message?: string };
  // zlib: a stream cut short ends in Z_BUF_ERROR; altered bytes fail decoding or the CRC (Z_DATA_ERROR).
  if (code === 'Z_BUF_ERROR' || message === 'Unexpected end of data')
    return new ArchiveError('truncated', `the archive ends unexpectedly (${message})`);
  return new ArchiveError('corrupt', `the archive cannot be decoded (${message})`);
}
