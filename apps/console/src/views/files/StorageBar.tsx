// Owner only: how much of the instance's file allowance is used (GET /system/storage, in bytes), in the
// binary units of file sizes. Files in the trash count until they are purged. Read again whenever files
// change anywhere in the console.
import { useEffect, useState } from 'preact/hooks';
import { call } from '../../api';
import { onFilesChanged } from '../../files/changes';
import { formatBytes } from '../../ui';

interface Storage {
  fileBytes: number;
  fileQuotaBytes: number;
}

/** Per cent of the allowance used, one decimal below 10 % (so a first upload does not read 0 %). */
export function usedShare({ fileBytes, fileQuotaBytes }: Storage): number {
  if (fileQuotaBytes <= 0) return 0;
  const share = (fileBytes / fileQuotaBytes) * 100;
  return share < 10 ? Math.round(share * 10) / 10 : Math.round(share);
}

export function StorageBar() {
  const [storage, setStorage] = useState<Storage>();
  useEffect(() => {
    const read = () => void call<Storage>('/api/v2.6/system/storage').then(setStorage, () => undefined);
    read();
    return onFilesChanged(read);
  }, []);
  if (!storage) return null;
  const share = usedShare(storage);
  return (
    <div class={share >= 90 ? 'storage full' : 'storage'}>
      <meter min={0} max={100} low={75} high={90} optimum={0} value={share} aria-label="Storage used" />
      <span class="muted">
        {formatBytes(storage.fileBytes)} of {formatBytes(storage.fileQuotaBytes)} used
      </span>
    </div>
  );
}
