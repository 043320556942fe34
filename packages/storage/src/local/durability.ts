// What makes a written object durable: its folder synced after the rename that names it.
import { access, mkdir, open, rename } from 'node:fs/promises';
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

/**
 * Renames an object's file to another name, durably (both folders synced); false when there is no
 * file at `from`. Creates the folder of `to` when it is the first file there.
 */
export async function moveDurably(storeDir: string, from: string, to: string): Promise<boolean> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const present = await access(from).then(
      () => true,
      () => false,
    );
    if (!present) return false;
    await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
    await syncFolder(storeDir);
    await rename(from, to);
  }
  await syncFolder(path.dirname(to));
  if (path.dirname(from) !== path.dirname(to)) await syncFolder(path.dirname(from));
  return true;
}

/** An fsync of a folder: what makes a rename or a new entry in it durable. */
export async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
