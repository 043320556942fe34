// What makes a written object durable: its folder synced after the rename that names it.
import { mkdir, open, rename } from 'node:fs/promises';
import path from 'node:path';

/**
 * Moves the temp file to its name and makes the name durable: an fsync of the folder (a rename is
 * not durable until the file system commits on its own), whose opening runs beside the rename. A
 * key's folder (one of 256) is created by the first object that lands in it, and is then made
 * durable in the store's folder.
 */
export async function renameDurably(
  storeDir: string,
  temp: string,
  target: string,
  whenNamed: (() => Promise<void>) | undefined,
): Promise<void> {
  const folder = path.dirname(target);
  const opening = open(folder, 'r');
  // Until awaited below: a missing folder is created, then opened again.
  opening.catch(() => undefined);
  try {
    await rename(temp, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      void opening.then((handle) => handle.close()).catch(() => undefined);
      throw error;
    }
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await syncFolder(storeDir);
    await rename(temp, target);
  }
  const handle = await opening.catch(() => open(folder, 'r'));
  try {
    await Promise.all([handle.sync(), whenNamed?.()]);
  } finally {
    // Synced: nothing waits for the closing.
    void handle.close().catch(() => undefined);
  }
}

/** An fsync of a folder: what makes a rename or a new entry in it durable. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
