// Where archives live in the blob store: under the instance's own prefix (so whatever removes an
// instance's objects removes them too), in folders no fileId can name (a fileId never starts with a dot,
// and parseObjectKey of @pds/storage reads these keys as no file's, so the orphan sweep leaves them).

/** An export's archive: written whole by the store (it appears whole or not at all), offered once the row says ready. */
export function exportKey(address: string, exportId: string): string {
  return `${address}/.exports/${exportId}.tar.gz`;
}

/** Whether a key is an export's archive: the one object a closing instance still serves its owner. */
export function isExportKey(address: string, key: string): boolean {
  return key.startsWith(`${address}/.exports/`);
}

/** An import's uploaded archive. */
export function importKey(address: string, importId: string): string {
  return `${address}/.imports/${importId}.tar.gz`;
}

const IMPORT_KEY = /^[^/]+\/\.imports\/([0-9a-f-]{36})\.tar\.gz$/;

/** The importId a key of `importKey`'s shape names, or null. */
export function importIdOf(key: string): string | null {
  return IMPORT_KEY.exec(key)?.[1] ?? null;
}
