// What uploads cut short leave behind in the temp folder, and when it is safe to remove.
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** A temp file untouched this long belongs to no live upload. */
export const STALE_TEMP_MS = 15 * 60 * 1000;

/**
 * Removes partial uploads nobody is writing any more: those of a process that no longer runs (the
 * writer's pid is in the name), and any untouched for STALE_TEMP_MS (a writer on another host, whose
 * pid means nothing here). A live upload writes continuously, so it never looks idle. How many.
 */
export async function removeStaleTemp(tmpDir: string, now: number): Promise<number> {
  const idleBefore = now - STALE_TEMP_MS;
  let removed = 0;
  for (const name of await readdir(tmpDir).catch(() => [] as string[])) {
    const file = path.join(tmpDir, name);
    const pid = Number(name.split('-')[0]);
    const modified = await stat(file).then(
      (st) => st.mtimeMs,
      () => null,
    );
    if (modified === null) continue;
    if ((pid !== process.pid && !processRuns(pid)) || modified < idleBefore) {
      await rm(file, { force: true });
      removed++;
    }
  }
  return removed;
}

/** Whether a process with this pid runs on this host (signal 0 checks without signalling). */
function processRuns(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
