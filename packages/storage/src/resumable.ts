// Resumable writes: one object's bytes sent in order over many requests (the tus uploads of
// apps/gateway/src/files/tus), kept by the store between them, and made the object once all are there.
// What the store keeps is described by a small JSON state that the caller stores with the upload (its
// database row): the row, not the store, says how far an upload got, so a gateway that dies mid-request
// leaves an upload any other gateway can resume.

/** A multipart upload on S3: the parts sent so far, and the bytes short of a part kept as an object of their own. */
export interface S3ResumableState {
  store: 's3';
  length: number;
  /** Bytes held: the parts' and the tail's. */
  offset: number;
  contentType: string;
  uploadId: string;
  /** Every part but the last is this long. */
  partBytes: number;
  parts: { number: number; size: number; etag: string }[];
  /** Bytes received after the last whole part (S3 takes no part under 5 MiB but the last): a plain object. */
  tail: { key: string; size: number } | null;
}

/** A file of records (local/format.ts) in the store's uploads folder, named by the upload's ref. */
export interface LocalResumableState {
  store: 'local';
  length: number;
  offset: number;
  contentType: string;
  /** The file's length that holds `offset` bytes: anything past it was never acknowledged, and is cut off. */
  fileBytes: number;
}

export type ResumableState = S3ResumableState | LocalResumableState;

export interface ResumableOptions {
  /** The object's whole size, declared before its first byte. */
  length: number;
  contentType?: string;
}

export interface AppendOptions {
  /**
   * Called whenever bytes are durable in the store before `source` ends (a part stored); what it was
   * given is then the committed state, and what the state before it held that it does not is removed.
   * A rejection stops the append (with that error). Without it only the returned state holds them. It
   * is never given a state that holds every byte: that one is returned, for the caller to finish first.
   */
  durable?: (state: ResumableState) => Promise<void>;
}

/**
 * Resumable writes of a store. `ref` names one among the resumable writes of a key (an upload's id: hex
 * of 64 characters); `key` is the object's. The caller keeps each state it commits, and passes the last
 * one committed to the next call.
 */
export interface ResumableWrites {
  beginResumable(key: string, ref: string, options: ResumableOptions): Promise<ResumableState>;
  /**
   * Stores the bytes of `source` after the `offset` bytes `state` holds (bytes an earlier call left past
   * it are dropped) and returns the state that holds them all. The caller bounds `source` by the declared
   * length. The returned state is not committed: the caller commits it, then calls `releaseResumable`
   * (or, refusing it, calls `releaseResumable` the other way round).
   */
  appendResumable(
    key: string,
    ref: string,
    state: ResumableState,
    source: AsyncIterable<Buffer>,
    options?: AppendOptions,
  ): Promise<ResumableState>;
  /** Removes what `drop` holds that `keep` does not (a replaced tail object). */
  releaseResumable(key: string, ref: string, drop: ResumableState, keep: ResumableState): Promise<void>;
  /** Makes the object from a state that holds every byte (`offset === length`), replacing any object at `key`. */
  finishResumable(key: string, ref: string, state: ResumableState): Promise<void>;
  /** Drops everything the write holds; dropping one already gone is not an error. */
  abortResumable(key: string, ref: string, state: ResumableState): Promise<void>;
}

/** A ref is an upload id: 64 hex characters, safe as a file name and a key segment. */
export const RESUMABLE_REF = /^[0-9a-f]{64}$/;

export function requireRef(ref: string): void {
  if (!RESUMABLE_REF.test(ref)) throw new Error('a resumable write is named by 64 hex characters');
}
