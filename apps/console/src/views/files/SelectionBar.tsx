// What the owner can do with the selected files at once: share, public link on or off, download as one
// zip, move to the trash (with an undo), and rename when one is selected. Each is one call to the server for the whole selection.
import { useState } from 'preact/hooks';
import { errorText } from '../../api';
import { bulk, downloadZip, MAX_SELECTION, type Outcome } from '../../files/actions';
import { moveToTrash } from '../../files/trash';
import { countWords } from '../../ui';
import type { UserAccount } from '../../types';
import { ShareLinkDialog } from '../ShareLinks';

/** "Shared 3 files with bob", and what failed, if anything did. */
export function outcomeWords(outcome: Outcome, done: (files: string) => string): { message?: string; error?: string } {
  const { done: succeeded, failed } = outcome;
  const message = succeeded.length ? done(countWords(succeeded.length)) : undefined;
  if (failed.length === 0) return { message };
  const first = failed[0] as Outcome['failed'][number];
  const error = `${countWords(failed.length)} could not be changed (${first.fileId}: ${first.message})`;
  return { message, error: message ? `${message}; ${error}` : error };
}

export function SelectionBar({
  selected,
  total,
  users,
  onSelectAll,
  onClear,
  onRename,
  onChanged,
}: {
  selected: string[];
  /** Files matching the filter: "Select all 250" is offered while fewer are selected. */
  total: number;
  users: UserAccount[];
  onSelectAll: () => void;
  onClear: () => void;
  /** Given when one file is selected and shown, to rename it where it is. */
  onRename?: () => void;
  onChanged: (result: { message?: string; error?: string }) => void;
}) {
  const [sharing, setSharing] = useState(false);
  const [userId, setUserId] = useState('');
  const [content, setContent] = useState(true);
  const [busy, setBusy] = useState(false);
  const [linking, setLinking] = useState(false);
  const people = users.filter((user) => user.kind === 'user');

  const run = async (action: () => Promise<Outcome>, done: (files: string) => string) => {
    setBusy(true);
    try {
      onChanged(outcomeWords(await action(), done));
    } catch (error) {
      onChanged({ error: errorText(error) });
    } finally {
      setBusy(false);
      setSharing(false);
    }
  };
  const download = async () => {
    setBusy(true);
    try {
      await downloadZip(selected);
    } catch (error) {
      onChanged({ error: errorText(error) });
    } finally {
      setBusy(false);
    }
  };
  const count = countWords(selected.length);

  return (
    <section class="selection" aria-label="Selected files">
      <div class="selection-row">
        <strong>{selected.length.toLocaleString('en')} selected</strong>
        {selected.length < total ? (
          <button type="button" class="link" onClick={onSelectAll}>
            Select all {total.toLocaleString('en')}
          </button>
        ) : null}
        <div class="actions">
          <button type="button" class="secondary" disabled={busy} aria-expanded={sharing} onClick={() => setSharing(!sharing)}>
            Share…
          </button>
          <button
            type="button"
            class="secondary"
            disabled={busy || selected.length > MAX_SELECTION}
            title={selected.length > MAX_SELECTION ? `At most ${MAX_SELECTION.toLocaleString('en')} files at once` : undefined}
            onClick={() => setLinking(true)}
          >
            Share link…
          </button>
          <button
            type="button"
            class="secondary"
            disabled={busy}
            onClick={() =>
              void run(
                () => bulk(selected, 'public'),
                (f) => `Public link on for ${f}`,
              )
            }
          >
            Make public
          </button>
          <button
            type="button"
            class="secondary"
            disabled={busy}
            onClick={() =>
              void run(
                () => bulk(selected, 'private'),
                (f) => `Public link off for ${f}`,
              )
            }
          >
            Make private
          </button>
          <button
            type="button"
            class="secondary"
            disabled={busy || selected.length > MAX_SELECTION}
            title={selected.length > MAX_SELECTION ? `At most ${MAX_SELECTION.toLocaleString('en')} files at once` : undefined}
            onClick={() => void download()}
          >
            Download
          </button>
          {onRename ? (
            <button type="button" class="secondary" disabled={busy} onClick={onRename}>
              Rename
            </button>
          ) : null}
          <button
            type="button"
            class="danger"
            disabled={busy}
            // Nothing to confirm: the toast's Undo brings them back, and so does the trash.
            onClick={() =>
              void run(
                () => moveToTrash(selected, undefined, () => onChanged({})),
                () => '',
              )
            }
          >
            Delete
          </button>
          <button type="button" class="link" onClick={onClear}>
            Clear selection
          </button>
        </div>
      </div>
      {linking ? <ShareLinkDialog fileIds={selected} label={count} onClose={() => setLinking(false)} /> : null}
      {sharing ? (
        <form
          class="share-form"
          onSubmit={(e) => {
            e.preventDefault();
            const name = people.find((user) => user.userId === userId)?.username ?? 'them';
            if (userId)
              void run(
                () => bulk(selected, 'share', { userId, content }),
                (f) => `Shared ${f} with ${name}`,
              );
          }}
        >
          <div class="field">
            <label for="share-selection">Share {count} with</label>
            <select id="share-selection" value={userId} required onChange={(e) => setUserId(e.currentTarget.value)}>
              <option value="">Choose a person</option>
              {people.map((user) => (
                <option key={user.userId} value={user.userId}>
                  {user.username}
                </option>
              ))}
            </select>
          </div>
          <label class="checkbox">
            <input type="checkbox" checked={content} onChange={(e) => setContent(e.currentTarget.checked)} />
            They may open the files too (not only see their details)
          </label>
          <div class="actions">
            <button type="submit" disabled={busy || people.length === 0}>
              Share
            </button>
            <button type="button" class="secondary" onClick={() => setSharing(false)}>
              Cancel
            </button>
          </div>
          {people.length === 0 ? <p class="muted">Nobody to share with yet: add people under Users.</p> : null}
        </form>
      ) : null}
    </section>
  );
}
