// The local store's resumable writes: a file of records (format.ts) in the store's `uploads` folder,
// named by the upload's ref, renamed over the key's file once every byte is there. A request's bytes
// are sealed into records of up to RECORD_BYTES as they arrive and written in batches; the file is
// synced before the state that counts them is handed back, and cut back to that state's length when the
// next request begins, so bytes that were written but never acknowledged are dropped, not trusted.
import { constants } from 'node:fs';
import { open, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { storedContentType } from '../blob-store';
import { requireRef, type AppendOptions, type LocalResumableState, type ResumableOptions, type ResumableState } from '../resumable';
import { renameDurably, syncFolder } from './durability';
import { additionalData, HASH_NAME, MAX_HEADER_BYTES, MAX_KEY_BYTES, parseHeader, recordsHeader, sealKey, unsealKey } from './format';
import { sealRecord, type RecordKeys } from './records';
import { BatchedWriter, readAt } from './streaming';

/** Bytes per record: one sealing and one tag per MiB. */
const RECORD_BYTES = 1024 * 1024;
/** How often a long request makes its bytes durable and reports them (an fsync each). */
const DURABLE_BYTES = 64 * 1024 * 1024;

export interface LocalResumableContext {
  /** The store's folder; uploads live in its `uploads` folder. */
  dir: string;
  dataKey: Buffer;
  nameKey: Buffer;
  /** Where the object of a key is kept. */
  pathOf(key: string): string;
}

export class LocalResumable {
  readonly folder: string;

  constructor(private readonly context: LocalResumableContext) {
    this.folder = path.join(context.dir, 'uploads');
  }

  async begin(key: string, ref: string, options: ResumableOptions): Promise<LocalResumableState> {
    requireRef(ref);
    const keyBytes = Buffer.from(key);
    if (keyBytes.length > MAX_KEY_BYTES) throw new Error(`object keys are limited to ${MAX_KEY_BYTES} bytes`);
    const contentType = typeOf(options.contentType);
    const header = recordsHeader(options.length, Buffer.from(contentType), sealKey(this.context.nameKey, keyBytes));
    const file = await open(this.pathOf(ref), 'wx', 0o600);
    try {
      await file.write(header);
      await file.sync();
    } finally {
      await file.close();
    }
    // The new name is durable before the upload is handed out.
    await syncFolder(this.folder);
    return { store: 'local', length: options.length, offset: 0, contentType, fileBytes: header.length };
  }

  async append(
    key: string,
    ref: string,
    state: ResumableState,
    source: AsyncIterable<Buffer>,
    options: AppendOptions = {},
  ): Promise<LocalResumableState> {
    const from = local(state);
    requireRef(ref);
    // Append-only from where the committed state ends; no O_CREAT: a write whose file went (aborted) fails.
    const file = await open(this.pathOf(ref), constants.O_WRONLY | constants.O_APPEND);
    const keys: RecordKeys = {
      dataKey: this.context.dataKey,
      objectData: additionalData(key, Buffer.from(from.contentType)),
      size: from.length,
    };
    let out = new BatchedWriter(file);
    let record: Buffer[] = [];
    let recordBytes = 0;
    let offset = from.offset;
    let fileBytes = from.fileBytes;
    let sinceDurable = 0;
    const seal = async () => {
      if (recordBytes === 0) return;
      const sealed = sealRecord(keys, offset, record.length === 1 ? (record[0] as Buffer) : Buffer.concat(record, recordBytes));
      for (const piece of sealed) {
        await out.add(piece);
        fileBytes += piece.length;
      }
      offset += recordBytes;
      record = [];
      recordBytes = 0;
    };
    /** Everything sealed so far, written and synced: the state that holds it. */
    const settle = async (): Promise<LocalResumableState> => {
      await seal();
      await out.end();
      await file.sync();
      out = new BatchedWriter(file);
      return { ...from, offset, fileBytes };
    };
    try {
      await file.truncate(from.fileBytes);
      for await (const chunk of source) {
        for (let at = 0; at < chunk.length;) {
          const take = Math.min(chunk.length - at, RECORD_BYTES - recordBytes);
          record.push(at === 0 && take === chunk.length ? chunk : chunk.subarray(at, at + take));
          recordBytes += take;
          sinceDurable += take;
          at += take;
          if (recordBytes === RECORD_BYTES) await seal();
        }
        if (options.durable && sinceDurable >= DURABLE_BYTES) {
          sinceDurable = 0;
          const state = await settle();
          if (state.offset < state.length) await options.durable(state);
        }
      }
      return await settle();
    } finally {
      await out.settle();
      await file.close();
    }
  }

  /** Renames the file of records over the key's object, once it holds every byte. */
  async finish(key: string, ref: string, state: ResumableState): Promise<void> {
    const done = local(state);
    if (done.offset !== done.length) throw new Error(`the upload holds ${done.offset} of ${done.length} bytes`);
    await renameDurably(this.context.dir, this.pathOf(ref), this.context.pathOf(key), undefined);
  }

  async abort(ref: string): Promise<void> {
    requireRef(ref);
    await rm(this.pathOf(ref), { force: true });
  }

  /** Removes the uploads of keys under `prefix` (an instance's whole store); how many. */
  async removeUnder(prefix: string): Promise<number> {
    let removed = 0;
    for (const name of await this.names()) {
      const key = await this.keyOf(name);
      if (key?.startsWith(prefix)) {
        await rm(path.join(this.folder, name), { force: true });
        removed++;
      }
    }
    return removed;
  }

  /** Removes uploads untouched since `before` whose ref `live` does not keep (its upload ended or expired); how many. */
  async removeAbandoned(live: (refs: string[]) => Promise<Set<string>>, before: number): Promise<number> {
    const idle: string[] = [];
    for (const name of await this.names()) {
      const modified = await stat(path.join(this.folder, name)).then(
        (st) => st.mtimeMs,
        () => null,
      );
      if (modified !== null && modified < before) idle.push(name);
    }
    if (idle.length === 0) return 0;
    const kept = await live(idle);
    const gone = idle.filter((name) => !kept.has(name));
    for (const name of gone) await rm(path.join(this.folder, name), { force: true });
    return gone.length;
  }

  private async names(): Promise<string[]> {
    return (await readdir(this.folder).catch(() => [] as string[])).filter((name) => HASH_NAME.test(name));
  }

  /** The object key an upload's file was begun for, from its sealed header; null when it went meanwhile. */
  private async keyOf(name: string): Promise<string | null> {
    const file = path.join(this.folder, name);
    const handle = await open(file, 'r').catch(() => null);
    if (!handle) return null;
    try {
      const { size } = await handle.stat();
      const header = parseHeader(await readAt(handle, 0, Math.min(size, MAX_HEADER_BYTES)), size, file);
      return header.sealedKey ? unsealKey(this.context.nameKey, header.sealedKey, file) : null;
    } finally {
      await handle.close();
    }
  }

  private pathOf(ref: string): string {
    return path.join(this.folder, ref);
  }
}

function local(state: ResumableState): LocalResumableState {
  if (state.store !== 'local') throw new Error('this upload was begun on another kind of store');
  return state;
}

/** The stored content type: at most 255 bytes, its length being one byte of the header. */
function typeOf(contentType: string | undefined): string {
  const type = storedContentType(contentType);
  return type.length <= 255 ? type : storedContentType(undefined);
}
