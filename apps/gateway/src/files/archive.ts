// Zip downloads of a selection, in two steps because a browser download is a navigation, which carries
// no token header: POST /files/archive keeps the selection and answers a signed, expiring address; a GET
// of that address streams the zip. The gateway makes it, one file at a time from the store into the zip,
// so memory stays bounded whatever the sizes. Only files the caller may read go in, checked again at the
// download (a permission revoked in between counts).
import { randomBytes } from 'node:crypto';
import type { PassThrough, Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import { kindOf } from '@pds/console/kinds';
import type { FileRecord, FileRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { objectKey, type BlobStore } from '@pds/storage';
import type { Clock } from '@pds/tokens';
import type { Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';
import { contentReadable, viewerOf, type Viewer } from './access';
import type { ArchiveSelections } from './archive-selections';

export const ARCHIVE_PATH = '/api/v2.6/files/archive';

export interface ArchiveServiceDeps {
  files: FileRepository;
  store: BlobStore;
  selections: ArchiveSelections;
  clock: Clock;
  /** How long a download address lives (SIGNED_URL_TTL). */
  signedUrlTtl: number;
  /** Public base URL of an instance address. */
  baseUrl: (address: string) => string;
}

export interface ArchiveAddress {
  url: string;
  /** The name the browser saves the zip as. */
  name: string;
}

/** What a zip entry is made of: the file's bytes (by id), its name and its time. */
export type ZipEntry = Pick<FileRecord, 'fileId' | 'name'> & { lastUpdated: Date | string };

/** A zip being made: its name, and the bytes to send (they end once every file is in). */
export interface ArchiveStream {
  name: string;
  stream: Readable;
}

const EXPIRED = 'The download address is invalid or has expired';
/** Kinds whose bytes are compressed already: stored as they are, which costs no CPU. */
const STORED_KINDS = new Set(['image', 'audio', 'video', 'archive', 'pdf']);

export class ArchiveService {
  constructor(private readonly deps: ArchiveServiceDeps) {}

  /** Keeps the readable files of the selection and answers the address of their zip; 404 when none is readable. */
  async create(tenant: ResolvedInstance, caller: Caller, { fileIds }: { fileIds: string[] }): Promise<ArchiveAddress> {
    const viewer = viewerOf(caller);
    const readable = await this.readable(tenant, viewer, fileIds);
    if (readable.length === 0) throw ApiError.notFound('None of these files exists or may be downloaded');
    const id = randomBytes(24).toString('base64url');
    const selection = { instanceId: tenant.instance.id, viewer, fileIds: readable.map((file) => file.fileId) };
    await this.deps.selections.save(id, selection, this.deps.signedUrlTtl);
    return { url: `${this.deps.baseUrl(tenant.instance.address)}${ARCHIVE_PATH}/${id}`, name: this.name() };
  }

  /** The zip of a download address, of the files its caller may still read; 403 for an address that is no (longer) one. */
  async open(tenant: ResolvedInstance, id: string): Promise<ArchiveStream> {
    const selection = /^[\w-]{32}$/.test(id) ? await this.deps.selections.load(id) : null;
    if (!selection || selection.instanceId !== tenant.instance.id) throw ApiError.forbidden(EXPIRED);
    const files = await this.readable(tenant, selection.viewer, selection.fileIds);
    return { name: this.name(), stream: this.zip(tenant, files) };
  }

  /**
   * The zip of `files` (whose reading the caller has decided), streamed as it is made: each file is read
   * from the store only when the zip reaches it, and one that cannot be read ends the stream in error.
   */
  zip(tenant: ResolvedInstance, files: ZipEntry[]): Readable {
    const zip = new ZipFile();
    const output = zip.outputStream as PassThrough;
    // A file that cannot be read ends the download in error: a zip missing a file must not look whole.
    const fail = (error: Error) => output.destroy(error);
    zip.on('error', fail);
    let reading: Readable | undefined;
    // A client that went away ends the zip, and the file being read is let go with it.
    output.once('close', () => reading?.destroy());
    const names = new UniqueNames();
    for (const file of files) {
      const options = { mtime: new Date(file.lastUpdated), compress: !STORED_KINDS.has(kindOf(file.name)) };
      // Each file is opened only when the zip reaches it.
      zip.addReadStreamLazy(names.take(file.name), options, (done) => {
        this.deps.store.read(objectKey(tenant.instance.address, file.fileId)).then((blob) => {
          if (!blob) return fail(new Error(`the bytes of ${file.fileId} are gone`));
          if (output.destroyed) return void blob.stream.destroy();
          reading = blob.stream.once('error', fail);
          done(null, blob.stream);
        }, fail);
      });
    }
    zip.end();
    return output;
  }

  /** The Completed files of `fileIds` whose content the viewer may read, in the order given. */
  private async readable(tenant: ResolvedInstance, viewer: Viewer, fileIds: string[]): Promise<FileRecord[]> {
    return (await this.deps.files.findAll(tenant.instance.id, fileIds)).filter((file) => contentReadable(viewer, file));
  }

  /** The name a zip is saved as: `files-2026-11-21.zip`. */
  name(): string {
    return `files-${this.deps.clock().toISOString().slice(0, 10)}.zip`;
  }
}

/**
 * Names for zip entries: one path segment each (a `/` or `\` in a file name would make folders, or
 * climb out of one with `..`), and each once: `photo.jpg`, `photo (2).jpg`, `photo (3).jpg`.
 */
export class UniqueNames {
  private readonly taken = new Set<string>();

  take(name: string): string {
    // eslint-disable-next-line no-control-regex
    const safe = name.replace(/[/\\\u0000-\u001f]/g, '_').replace(/^\.+$/, '_') || '_';
    const dot = safe.lastIndexOf('.');
    const [stem, ext] = dot > 0 ? [safe.slice(0, dot), safe.slice(dot)] : [safe, ''];
    let candidate = safe;
    for (let n = 2; this.taken.has(candidate.toLowerCase()); n++) candidate = `${stem} (${n})${ext}`;
    this.taken.add(candidate.toLowerCase());
    return candidate;
  }
}
