// Uploads that were started and never completed (a closed tab, a lost connection). They are kept out
// of the file list; a notice says how many there are, until the person removes or dismisses them.
// The server removes them by itself after its upload deadline (an hour by default).
import { useState } from 'preact/hooks';
import { errorText } from '../../api';
import { bulk } from '../../files/actions';
import { resumableFileIds } from '../../resumable-entries';
import type { FileRecord } from '../../types';
import { countWords, formatDate } from '../../ui';
import { outcomeWords } from './SelectionBar';

const DISMISSED = 'pds.dismissed-uploads';

const dismissedIds = (): Set<string> => new Set(JSON.parse(localStorage.getItem(DISMISSED) ?? '[]') as string[]);

export function Unfinished({
  files,
  owner,
  onChanged,
}: {
  files: FileRecord[];
  owner: boolean;
  onChanged: (result: { message?: string; error?: string }) => void;
}) {
  const [open, setOpen] = useState(false);
  const [dismissed, setDismissed] = useState(dismissedIds);
  const [busy, setBusy] = useState(false);
  const waiting = files.filter((file) => !dismissed.has(file.fileId));
  if (waiting.length === 0) return null;
  // Large files this browser was sending: choosing the same file again continues where it stopped.
  const resumable = resumableFileIds();

  const dismiss = () => {
    // Only these: a later unfinished upload shows the notice again.
    const all = files.map((file) => file.fileId);
    localStorage.setItem(DISMISSED, JSON.stringify(all));
    setDismissed(new Set(all));
  };
  const remove = async (fileIds: string[]) => {
    setBusy(true);
    try {
      onChanged(outcomeWords(await bulk(fileIds, 'delete'), (f) => `Removed ${f} that did not finish uploading`));
    } catch (error) {
      onChanged({ error: errorText(error) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="notice" aria-labelledby="unfinished-title">
      <div class="notice-row">
        <p id="unfinished-title">{countWords(waiting.length, 'upload')} did not finish.</p>
        <div class="actions">
          <button type="button" class="secondary small" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? 'Hide them' : 'Show them'}
          </button>
          <button type="button" class="link" onClick={dismiss}>
            Dismiss
          </button>
        </div>
      </div>
      {open ? (
        <>
          <ul class="unfinished">
            {waiting.map((file) => (
              <li key={file.fileId}>
                <span>{file.name}</span>
                <span class="muted">
                  started {formatDate(file.dateCreated)}
                  {resumable.has(file.fileId) ? ' · upload the same file again to continue where it stopped' : ''}
                </span>
                {owner ? (
                  <button type="button" class="secondary small" disabled={busy} onClick={() => void remove([file.fileId])}>
                    Remove {file.name}
                  </button>
                ) : null}
              </li>
            ))}
          </ul>
          {owner && waiting.length > 1 ? (
            <button type="button" class="danger small" disabled={busy} onClick={() => void remove(waiting.map((file) => file.fileId))}>
              Remove all {waiting.length}
            </button>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
