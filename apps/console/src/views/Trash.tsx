// Owner only: deleted files wait here (their bytes still count in the quota) until restored, deleted
// for good, or purged by the data store after its trash period. Restore brings back the same bytes and
// the same sharing.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { href } from '../router';
import type { FileRecord } from '../types';
import { ConfirmButton, countWords, formatBytes, runChange, ScreenTitle, shortDate, Status } from '../ui';

type Trashed = FileRecord & { trashedAt: string; size: number };

const TRASH = '/api/v2.6/files/trash';

export function Trash() {
  const [files, setFiles] = useState<Trashed[]>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const load = () => call<Trashed[]>(`${TRASH}?take=1000`).then(setFiles, (e: unknown) => setStatus({ error: errorText(e) }));
  useEffect(() => void load(), []);

  const run = (work: () => Promise<unknown>, message: string) => runChange(work, message, setStatus, load);
  const restore = (file: Trashed) =>
    run(() => call(`${TRASH}/${encodeURIComponent(file.fileId)}/restore`, { method: 'POST' }), `${file.name} is back in your files`);
  const purge = (file: Trashed) =>
    void run(() => call(`${TRASH}/${encodeURIComponent(file.fileId)}`, { method: 'DELETE' }), `${file.name} deleted for good`);
  const empty = () => void run(() => call(TRASH, { method: 'DELETE' }), 'The trash is empty');

  const trashed = files ?? [];
  const bytes = trashed.reduce((sum, file) => sum + file.size, 0);
  return (
    <section aria-labelledby="trash-title">
      <div class="screen-head">
        <ScreenTitle id="trash-title">Trash</ScreenTitle>
        {files ? (
          <p class="summary">
            {countWords(trashed.length)} · {formatBytes(bytes)}
          </p>
        ) : null}
      </div>
      <p class="muted">
        Deleted files wait here and still count in your storage until you delete them for good; after a while the data store does it for
        you. Nobody can open them meanwhile. <a href={href('files')}>Back to your files</a>
      </p>
      <Status {...status} message={status.message ?? (files ? undefined : 'Loading…')} />
      {trashed.length > 0 ? (
        <>
          <ul class="rows trash">
            {trashed.map((file) => (
              <li key={file.fileId}>
                <div class="row-text">
                  <strong>{file.name}</strong>
                  <span class="muted">
                    {formatBytes(file.size)} · deleted {shortDate(file.trashedAt)}
                  </span>
                </div>
                <div class="actions">
                  <button type="button" class="secondary small" onClick={() => void restore(file)}>
                    Restore {file.name}
                  </button>
                  <ConfirmButton
                    small
                    label={`Delete ${file.name} for good`}
                    question="It cannot be brought back."
                    confirmLabel="Delete for good"
                    onConfirm={() => purge(file)}
                  />
                </div>
              </li>
            ))}
          </ul>
          <p>
            <ConfirmButton
              label="Empty the trash"
              question={`Delete all ${countWords(trashed.length)} for good?`}
              confirmLabel="Delete them for good"
              onConfirm={empty}
            />
          </p>
        </>
      ) : files ? (
        <p class="empty">The trash is empty.</p>
      ) : null}
    </section>
  );
}
