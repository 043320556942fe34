// Files changed somewhere (an upload, a delete, an undo): whatever shows figures about them (the storage
// bar, a listing) reads them again.
const CHANGED = 'pds:files-changed';

export const filesChanged = () => dispatchEvent(new Event(CHANGED));

export function onFilesChanged(listener: () => void): () => void {
  addEventListener(CHANGED, listener);
  return () => removeEventListener(CHANGED, listener);
}
