// One file: preview, download, metadata, public/private, sharing and who has access, delete.
// Changes are offered to the owner only; other users see what they were given.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { loadPreview, previewKind } from '../preview';
import { href } from '../router';
import type { Session } from '../session';
import type { FileRecord, UserAccount } from '../types';
import { formatBytes, formatDate, ScreenTitle, Status } from '../ui';

const FILES = '/api/v2.6/files';

function Preview({ file }: { file: FileRecord }) {
  const kind = previewKind(file.name);
  const [preview, setPreview] = useState<{ url?: string; text?: string }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    if (!kind || !file.contentUrl) return;
    let made: string | undefined;
    loadPreview(file.contentUrl, file.name, kind).then(
      (loaded) => {
        made = loaded.url;
        setPreview(loaded);
      },
      (e: unknown) => setError(errorText(e)),
    );
    return () => made && URL.revokeObjectURL(made);
  }, [file.fileId, file.contentUrl !== undefined]);

  if (!file.contentUrl) return <p class="muted">No content to show (not uploaded yet, or no access to its content).</p>;
  if (!kind) return <p class="muted">No preview for this kind of file.</p>;
  if (error) return <p class="error">{error}</p>;
  if (!preview) return <p class="muted">Loading preview…</p>;
  const label = `Preview of ${file.name}`;
  if (kind === 'image') return <img class="preview" src={preview.url} alt={label} />;
  if (kind === 'pdf') return <iframe class="preview" src={preview.url} title={label} />;
  return (
    <pre class="preview" aria-label={label} tabIndex={0}>
      {preview.text}
    </pre>
  );
}

function Sharing({
  file,
  users,
  ownerId,
  onChange,
}: {
  file: FileRecord;
  users: UserAccount[];
  ownerId: string;
  onChange: (file: FileRecord) => void;
}) {
  const candidates = users.filter((user) => user.kind === 'user');
  const [userId, setUserId] = useState('');
  const [content, setContent] = useState(true);
  const [error, setError] = useState<string>();
  const nameOf = (id: string) => users.find((user) => user.userId === id)?.username ?? id;
  const act = async (path: string) => {
    try {
      onChange(await call<FileRecord>(path));
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    }
  };
  const id = encodeURIComponent(file.fileId);

  return (
    <section aria-labelledby="sharing-title">
      <h2 id="sharing-title">Who has access</h2>
      <ul class="access">
        <li>The owner (you): everything</li>
        {file.contentPublic ? <li>Anyone with the address: contents</li> : null}
        {(file.permissions ?? [])
          .filter((permission) => permission.userId !== ownerId)
          .map((permission) => (
            <li key={permission.userId}>
              {nameOf(permission.userId)}: {permission.contentReadable ? 'details and contents' : 'details only'}{' '}
              <button
                type="button"
                class="secondary"
                onClick={() => void act(`${FILES}/restrictAccess/${id}/${encodeURIComponent(permission.userId)}`)}
              >
                Revoke {nameOf(permission.userId)}
              </button>
            </li>
          ))}
      </ul>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          if (userId) void act(`${FILES}/allowAccess/${id}/${encodeURIComponent(userId)}?content=${content}`);
        }}
      >
        <label>
          Share with
          <select name="shareWith" value={userId} onChange={(e) => setUserId(e.currentTarget.value)} required>
            <option value="">Choose a user</option>
            {candidates.map((user) => (
              <option value={user.userId}>{user.username}</option>
            ))}
          </select>
        </label>
        <label class="checkbox">
          <input type="checkbox" name="shareContent" checked={content} onChange={(e) => setContent(e.currentTarget.checked)} />
          Contents too (not only the details)
        </label>
        <button type="submit">Share</button>
      </form>
      {candidates.length === 0 ? <p class="muted">No other users yet: create them under Users.</p> : null}
      <Status error={error} />
    </section>
  );
}

function Metadata({ file, onChange }: { file: FileRecord; onChange: (file: FileRecord) => void }) {
  const [title, setTitle] = useState(file.title ?? '');
  const [description, setDescription] = useState(file.description ?? '');
  const [tags, setTags] = useState((file.tags ?? []).join(', '));
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      // The whole record's editable fields, as hat-js's updateFileParameters sends them (the name stays).
      const body = {
        name: file.name,
        title,
        description,
        tags: tags
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
      };
      onChange(await call<FileRecord>(`${FILES}/file/${encodeURIComponent(file.fileId)}`, { method: 'PUT', body }));
      setStatus({ message: 'Saved' });
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };
  return (
    <form onSubmit={save} aria-labelledby="metadata-title">
      <h2 id="metadata-title">Details</h2>
      <label>
        Title
        <input name="title" value={title} maxLength={1024} onInput={(e) => setTitle(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <textarea name="description" value={description} rows={3} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Tags (comma-separated)
        <input name="tags" value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
      </label>
      <button type="submit">Save details</button>
      <Status {...status} />
    </form>
  );
}

export function FileDetails({ fileId, session }: { fileId: string; session: Session }) {
  const owner = session.scope === 'owner';
  const [file, setFile] = useState<FileRecord>();
  const [users, setUsers] = useState<UserAccount[]>([]);
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const id = encodeURIComponent(fileId);

  useEffect(() => {
    call<FileRecord>(`${FILES}/file/${id}`).then(setFile, (e: unknown) => setStatus({ error: errorText(e) }));
    if (owner) call<UserAccount[]>('/users/user').then(setUsers, () => undefined);
  }, [fileId]);

  const change = async (path: string, method = 'GET', done?: string) => {
    try {
      setFile(await call<FileRecord>(path, { method }));
      setStatus({ message: done });
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  if (!file)
    return (
      <section>
        <p>
          <a href={href('files')}>← All files</a>
        </p>
        <Status {...status} message="Loading…" />
      </section>
    );

  return (
    <section aria-labelledby="file-title" class="file-details">
      <p>
        <a href={href('files')}>← All files</a>
      </p>
      <ScreenTitle>{file.title || file.name}</ScreenTitle>
      <dl class="facts">
        <dt>Name</dt>
        <dd>{file.name}</dd>
        <dt>Source</dt>
        <dd>{file.source}</dd>
        <dt>Status</dt>
        <dd>{file.status.status}</dd>
        <dt>Size</dt>
        <dd>{formatBytes(file.status.size)}</dd>
        <dt>Access</dt>
        <dd>{file.contentPublic ? 'Public: anyone with the address may read it' : 'Private'}</dd>
        <dt>Updated</dt>
        <dd>{formatDate(file.lastUpdated)}</dd>
      </dl>
      <div class="actions">
        {file.contentUrl ? (
          <a class="button" href={file.contentUrl} download={file.name}>
            Download
          </a>
        ) : null}
        {owner && file.status.status !== 'Deleted' ? (
          <>
            <button
              type="button"
              onClick={() =>
                void change(
                  `${FILES}/${file.contentPublic ? 'restrictAccessPublic' : 'allowAccessPublic'}/${id}`,
                  'GET',
                  file.contentPublic ? 'Now private' : 'Now public',
                )
              }
            >
              {file.contentPublic ? 'Make private' : 'Make public'}
            </button>
            <button
              type="button"
              class="danger"
              onClick={() => confirm(`Delete ${file.name}?`) && void change(`${FILES}/file/${id}`, 'DELETE', 'Deleted')}
            >
              Delete
            </button>
          </>
        ) : null}
      </div>
      {file.contentPublic ? (
        <p>
          Public address: <code>{`${location.origin}${FILES}/content/${fileId}`}</code>
        </p>
      ) : null}
      <Status {...status} />
      <section aria-labelledby="preview-title">
        <h2 id="preview-title">Preview</h2>
        <Preview file={file} />
      </section>
      {owner ? <Metadata key={file.fileId} file={file} onChange={setFile} /> : null}
      {owner ? <Sharing file={file} users={users} ownerId={session.userId} onChange={setFile} /> : null}
    </section>
  );
}
