// Why an archive is refused: one kind per problem, the entry at fault, and a sentence for people.

export type Problem =
  /** Not gzip, or bytes that gzip or tar cannot decode. */
  | 'corrupt'
  /** Ends before its end: cut gzip stream, cut entry, or no manifest. */
  | 'truncated'
  /** Gzip and tar, but no `pds-export.json` first. */
  | 'not-an-export'
  /** A format version this reader does not know. */
  | 'unsupported-version'
  /** A path outside the format's grammar (`../x`, `/etc/passwd`, `notes.txt`). */
  | 'unexpected-path'
  /** An entry that is no regular file (a link, a folder), or one where none may be. */
  | 'unexpected-entry'
  | 'out-of-order'
  /** The same path, or the same id (fileId, recordId, username…), twice. */
  | 'duplicate'
  /** An entry the format requires is absent (the bytes of a Completed file). */
  | 'missing-entry'
  /** Over a configured limit: an entry, the number of entries, or the whole archive. */
  | 'oversized'
  /** An entry whose content does not fit its schema. */
  | 'invalid-entry'
  /** A username, bundle or record named but not in the archive. */
  | 'unknown-reference'
  /** An entry's bytes differ from their SHA-256 in the manifest. */
  | 'hash-mismatch'
  /** An entry's counted bytes differ from a size stated for it. */
  | 'size-mismatch'
  /** The manifest lists other entries than the archive holds. */
  | 'manifest-mismatch'
  /** The manifest's counts differ from what the archive holds. */
  | 'count-mismatch';

export class ArchiveError extends Error {
  constructor(
    readonly problem: Problem,
    readonly detail: string,
    /** The entry at fault (with a line number inside NDJSON), when one is. */
    readonly path?: string,
  ) {
    super(path ? `${path}: ${detail}` : detail);
  }
}
