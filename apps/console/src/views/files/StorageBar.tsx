// Owner only: how much of the instance's file quota is used, from GET /system/status (the entries the
// HAT clients read for their own storage bar). Files in the trash count until they are purged.
import { useEffect, useState } from 'preact/hooks';
import { call } from '../../api';
import { href } from '../../router';

interface StatusEntry {
  title: string;
  kind: { metric: string | number; kind: string; units?: string };
}

export interface Storage {
  used: string;
  allowed: string;
  /** Per cent of the quota used. */
  share: number;
}

/** The file figures of a system status answer, or undefined when it lacks them. */
export function fileStorage(entries: StatusEntry[]): Storage | undefined {
  const find = (title: string) => entries.find((entry) => entry.title === title)?.kind;
  const [used, allowed, share] = [find('File Storage Used'), find('File Storage'), find('File Storage Used Share')];
  if (!used || !allowed || !share) return undefined;
  return {
    used: `${used.metric} ${used.units ?? ''}`.trim(),
    allowed: `${allowed.metric} ${allowed.units ?? ''}`.trim(),
    share: Number(share.metric),
  };
}

/** `version` changes after uploads and deletes: the figures are read again. */
export function StorageBar({ version }: { version: number }) {
  const [storage, setStorage] = useState<Storage>();
  useEffect(() => {
    call<StatusEntry[]>('/api/v2.6/system/status').then(
      (entries) => setStorage(fileStorage(entries)),
      () => undefined,
    );
  }, [version]);
  if (!storage) return null;
  const full = storage.share >= 90;
  return (
    <div class={full ? 'storage full' : 'storage'}>
      <meter min={0} max={100} low={75} high={90} optimum={0} value={storage.share} aria-label="Storage used" />
      <span class="muted">
        {storage.used} of {storage.allowed} used ({storage.share}%) · <a href={href('trash')}>Trash</a>
      </span>
    </div>
  );
}
