// What tus-js-client keeps in localStorage of the uploads this browser left unfinished, read without
// loading tus-js-client itself (resumable-upload.ts is loaded only when a large file is sent).

/** The file ids of uploads this browser left unfinished (the notice of unfinished uploads says they can go on). */
export function resumableFileIds(): Set<string> {
  const ids = new Set<string>();
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i) ?? '';
    if (!key.startsWith('tus::')) continue;
    try {
      const fileId = (JSON.parse(localStorage.getItem(key) ?? '{}') as { metadata?: { fileId?: string } }).metadata?.fileId;
      if (fileId) ids.add(fileId);
    } catch {
      // Not an entry of ours.
    }
  }
  return ids;
}
