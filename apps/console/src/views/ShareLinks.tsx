// Share links in the console: the dialog that makes one for a file or a selection (expiry, password,
// download limit, view only) and shows its address once, with a copy button; and a file's links with
// their use and a revoke button. The file views only open these (FileDetails, SelectionBar).
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from '../api';
import { createLink, linksOf, revokeLink, STATE_WORDS, type ShareLink } from '../files/links';
import { formatDate, Status, type StatusLine } from '../ui';

const EXPIRIES: [string, string][] = [
  ['', 'Never'],
  ['1', 'In 1 day'],
  ['7', 'In 7 days'],
  ['30', 'In 30 days'],
  ['date', 'On a date…'],
];

/** When a link made now with this choice expires (ISO), or undefined for never. */
function expiryOf(choice: string, date: string): string | undefined {
  if (choice === '') return undefined;
  if (choice === 'date') return date ? new Date(`${date}T23:59:59`).toISOString() : undefined;
  return new Date(Date.now() + Number(choice) * 86_400_000).toISOString();
}

/** A modal dialog that makes a share link to `fileIds`; `label` names them ("tax.pdf", "3 files"). */
export function ShareLinkDialog({
  fileIds,
  label,
  onClose,
  onCreated,
}: {
  fileIds: string[];
  label: string;
  onClose: () => void;
  onCreated?: (link: ShareLink) => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [expiry, setExpiry] = useState('7');
  const [date, setDate] = useState('');
  const [password, setPassword] = useState('');
  const [limit, setLimit] = useState('');
  const [allowDownload, setAllowDownload] = useState(true);
  const [made, setMade] = useState<ShareLink>();
  const [status, setStatus] = useState<StatusLine>({});
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const element = dialog.current;
    element?.showModal();
    return () => element?.close();
  }, []);

  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const link = await createLink({
        fileIds,
        expiresAt: expiryOf(expiry, date),
        password: password || undefined,
        downloadLimit: limit ? Number(limit) : undefined,
        allowDownload,
      });
      setMade(link);
      setStatus({ message: 'The link is ready.' });
      onCreated?.(link);
    } catch (e) {
      setStatus({ error: errorText(e) });
    } finally {
      setBusy(false);
    }
  };

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(made?.url ?? '');
      setStatus({ message: 'Copied. Paste it into a message to whoever should have it.' });
    } catch {
      setStatus({ error: 'Your browser did not let the page copy: select the address and copy it yourself.' });
    }
  };

  return (
    <dialog ref={dialog} class="share-link-dialog" aria-labelledby="share-link-title" onClose={onClose}>
      <h2 id="share-link-title">Share link to {label}</h2>
      {made ? (
        <div class="share-link-made">
          <label for="share-link-url">Anyone with this address can open {label}, no account needed</label>
          <div class="share-link-copy">
            <input id="share-link-url" readOnly value={made.url} onFocus={(e) => e.currentTarget.select()} />
            <button type="button" onClick={() => void copy()}>
              Copy
            </button>
          </div>
          <p class="hint">This is the only time the address is shown: copy it now. You can revoke the link at any time.</p>
        </div>
      ) : (
        <form class="share-link-form" onSubmit={(e) => void create(e)}>
          <p class="muted">Anyone who has the link can open what it shares, without an account, until you revoke it.</p>
          <div class="fields">
            <div class="field">
              <label for="share-link-expiry">Expires</label>
              <select id="share-link-expiry" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
                {EXPIRIES.map(([value, words]) => (
                  <option key={value} value={value}>
                    {words}
                  </option>
                ))}
              </select>
            </div>
            {expiry === 'date' ? (
              <div class="field">
                <label for="share-link-date">Last day</label>
                <input
                  id="share-link-date"
                  type="date"
                  required
                  min={new Date().toISOString().slice(0, 10)}
                  value={date}
                  onInput={(e) => setDate(e.currentTarget.value)}
                />
              </div>
            ) : null}
            <div class="field">
              <label for="share-link-password">Password (optional)</label>
              <input
                id="share-link-password"
                type="password"
                autocomplete="new-password"
                minLength={6}
                maxLength={256}
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </div>
            <div class="field">
              <label for="share-link-limit">Most downloads (optional)</label>
              <input
                id="share-link-limit"
                type="number"
                min={1}
                max={1000000}
                inputMode="numeric"
                value={limit}
                onInput={(e) => setLimit(e.currentTarget.value)}
              />
            </div>
          </div>
          <label class="checkbox">
            <input type="checkbox" checked={allowDownload} onChange={(e) => setAllowDownload(e.currentTarget.checked)} />
            They may download (not only view)
          </label>
          <div class="actions">
            <button type="submit" disabled={busy}>
              Create link
            </button>
          </div>
        </form>
      )}
      <Status {...status} />
      <div class="actions">
        <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
          {made ? 'Done' : 'Cancel'}
        </button>
      </div>
    </dialog>
  );
}

/** "2 of 5 downloads · 3 views · last used 3 Nov · until 10 Nov · password · view only". */
function usageWords(link: ShareLink): string {
  const downloads =
    link.downloadLimit === undefined ? `${link.downloads} downloads` : `${link.downloads} of ${link.downloadLimit} downloads`;
  return [
    downloads,
    `${link.views} views`,
    link.lastUsedAt ? `last used ${formatDate(link.lastUsedAt)}` : 'not used yet',
    link.expiresAt ? `until ${formatDate(link.expiresAt)}` : undefined,
    link.hasPassword ? 'password' : undefined,
    link.allowDownload ? undefined : 'view only',
  ]
    .filter(Boolean)
    .join(' · ');
}

/** The share links of one file, newest first, with their use; an open one can be revoked. `version` reloads them. */
export function FileLinks({ fileId, version = 0 }: { fileId: string; version?: number }) {
  const [links, setLinks] = useState<ShareLink[]>();
  const [status, setStatus] = useState<StatusLine>({});
  const load = () =>
    linksOf(fileId).then(
      (found) => setLinks(found),
      (e: unknown) => setStatus({ error: errorText(e) }),
    );
  useEffect(() => void load(), [fileId, version]);

  const revoke = async (link: ShareLink) => {
    try {
      await revokeLink(link.id);
      setStatus({ message: 'The link is revoked: it opens nothing any more.' });
      await load();
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  return (
    <section class="panel share-links" aria-labelledby="share-links-title">
      <h2 id="share-links-title">Share links</h2>
      {links && links.length === 0 ? <p class="muted">No link shares this file.</p> : null}
      <ul class="rows">
        {(links ?? []).map((link) => (
          <li key={link.id}>
            <div class="row-text">
              <strong>
                {STATE_WORDS[link.state]} link{link.fileIds.length > 1 ? ` to ${link.fileIds.length} files` : ''}, made{' '}
                {formatDate(link.createdAt)}
              </strong>
              <span class="muted">{usageWords(link)}</span>
            </div>
            {link.state === 'active' ? (
              <button
                type="button"
                class="secondary small"
                aria-label={`Revoke the link made ${formatDate(link.createdAt)}`}
                onClick={() => void revoke(link)}
              >
                Revoke
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      <Status {...status} />
    </section>
  );
}
