// One file: preview, download, its details (edited in place), public link, who has access, sharing,
// delete. Changes are offered to the owner only; other people see what they were given.
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, call, errorText } from '../api';
import { getFile, parseTags, restoreFile, saveDetails, setPublic, share, unshare } from '../files/actions';
import { filesChanged } from '../files/changes';
import { moveToTrash } from '../files/trash';
import { kindOf } from '../files/kinds';
import { accessWords, sharedWith, stateWords } from '../files/words';
import { FileIcon } from '../icons';
import { loadPreview, previewKind } from '../preview';
import { href } from '../router';
import type { Session } from '../session';
import type { FileRecord, UserAccount } from '../types';
import { formatBytes, formatDate, ScreenTitle, Status } from '../ui';
import { filesAddress } from './Files';
import { FileLinks, ShareLinkDialog } from './ShareLinks';

type StatusText = { message?: string; error?: string };

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

  if (!file.contentUrl) return <p class="muted">Nothing to show: the file is not uploaded yet, or you may see only its details.</p>;
  if (!kind) return <p class="muted">No preview for this kind of file. Download it to open it.</p>;
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

/** What is known of the file, each line only when there is something to say. */
function Facts({ file, access }: { file: FileRecord; access?: string }) {
  const facts: [string, string | undefined][] = [
    ['Name', file.title ? file.name : undefined],
    ['Description', file.description],
    ['Size', file.status.size === undefined ? undefined : formatBytes(file.status.size)],
    [stateWords(file), formatDate(file.dateCreated)],
    ['Modified', formatDate(file.lastUpdated)],
    ['Who can see it', access],
    // Files the console uploads carry the source "console"; any other names the app that added it.
    ['Added by', file.source === 'console' ? undefined : `the app ${file.source}`],
  ];
  return (
    <dl class="facts">
      {facts
        .filter((fact): fact is [string, string] => Boolean(fact[1]))
        .map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      {file.tags?.length ? (
        <div>
          <dt>Tags</dt>
          <dd class="tags">
            {file.tags.map((tag) => (
              <span key={tag} class="tag">
                {tag}
              </span>
            ))}
          </dd>
        </div>
      ) : null}
    </dl>
  );
}

/** The details as a form, in the place where they were shown. */
function EditDetails({ file, onDone }: { file: FileRecord; onDone: (saved?: FileRecord, status?: StatusText) => void }) {
  const [name, setName] = useState(file.name);
  const [title, setTitle] = useState(file.title ?? '');
  const [description, setDescription] = useState(file.description ?? '');
  const [tags, setTags] = useState((file.tags ?? []).join(', '));
  const [error, setError] = useState<string>();
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      onDone(await saveDetails(file, { name: name.trim(), title, description, tags: parseTags(tags) }), { message: 'Saved' });
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <form class="edit-details" onSubmit={save} aria-label="Edit details" onKeyDown={(e) => e.key === 'Escape' && onDone()}>
      <label>
        Name
        <input name="name" required maxLength={1024} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Title
        <input name="title" maxLength={1024} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <textarea name="description" rows={3} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Tags (comma-separated)
        <input name="tags" value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
      </label>
      <div class="actions">
        <button type="submit">Save details</button>
        <button type="button" class="secondary" onClick={() => onDone()}>
          Cancel
        </button>
      </div>
      <Status error={error} />
    </form>
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
  const people = users.filter((user) => user.kind === 'user');
  const [userId, setUserId] = useState('');
  const [content, setContent] = useState(true);
  const [error, setError] = useState<string>();
  const nameOf = (id: string) => users.find((user) => user.userId === id)?.username ?? 'someone';
  const act = async (work: Promise<FileRecord>) => {
    try {
      onChange(await work);
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    }
  };
  const others = sharedWith(file, ownerId);

  return (
    <section class="panel" aria-labelledby="sharing-title">
      <h2 id="sharing-title">Who has access</h2>
      <ul class="access-list">
        <li>You: everything</li>
        {file.contentPublic ? <li>Anyone with the public link: the contents</li> : null}
        {(file.permissions ?? [])
          .filter((permission) => others.includes(permission.userId))
          .map((permission) => (
            <li key={permission.userId}>
              <span>
                {nameOf(permission.userId)}: {permission.contentReadable ? 'details and contents' : 'details only'}
              </span>
              <button type="button" class="secondary small" onClick={() => void act(unshare(file.fileId, permission.userId))}>
                Stop sharing with {nameOf(permission.userId)}
              </button>
            </li>
          ))}
      </ul>
      {people.length ? (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            if (userId) void act(share(file.fileId, userId, content));
          }}
        >
          <label>
            Share with
            <select name="shareWith" value={userId} onChange={(e) => setUserId(e.currentTarget.value)} required>
              <option value="">Choose a person</option>
              {people.map((user) => (
                <option key={user.userId} value={user.userId}>
                  {user.username}
                </option>
              ))}
            </select>
          </label>
          <label class="checkbox">
            <input type="checkbox" name="shareContent" checked={content} onChange={(e) => setContent(e.currentTarget.checked)} />
            They may open it too (not only see its details)
          </label>
          <button type="submit">Share</button>
        </form>
      ) : (
        <p class="muted">Nobody to share with yet: add people under Users.</p>
      )}
      <Status error={error} />
    </section>
  );
}

export function FileDetails({ fileId, session }: { fileId: string; session: Session }) {
  const owner = session.scope === 'owner';
  const [file, setFile] = useState<FileRecord>();
  const [users, setUsers] = useState<UserAccount[]>([]);
  const [editing, setEditing] = useState(false);
  const [status, setStatus] = useState<StatusText>({});
  const [linking, setLinking] = useState(false);
  const [linksVersion, setLinksVersion] = useState(0);

  useEffect(() => {
    getFile(fileId).then(setFile, (e: unknown) => setStatus({ error: errorText(e) }));
    if (owner) call<UserAccount[]>('/users/user').then(setUsers, () => undefined);
  }, [fileId]);

  const change = async (work: Promise<FileRecord>, done: string) => {
    try {
      setFile(await work);
      setStatus({ message: done });
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  // To the trash, and back to the list, where the toast offers the undo.
  const remove = async () => {
    if (!file) return;
    try {
      const outcome = await moveToTrash([file.fileId], file.name, () => undefined);
      if (outcome.done.length) location.hash = filesAddress;
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };
  const restore = async () => {
    try {
      setFile(await restoreFile(fileId));
      setStatus({ message: 'Restored: it is back in your files' });
      filesChanged();
    } catch (e) {
      setStatus({
        error: e instanceof ApiFailure && e.status < 500 ? 'It was deleted for good and cannot be brought back.' : errorText(e),
      });
    }
  };

  const back = (
    <p>
      <a href={filesAddress}>← All files</a>
    </p>
  );
  if (!file)
    return (
      <section>
        {back}
        <Status {...status} message={status.message ?? 'Loading…'} />
      </section>
    );

  const nameOf = (userId: string) => users.find((user) => user.userId === userId)?.username;
  const publicLink = `${location.origin}/api/v2.6/files/content/${encodeURIComponent(file.fileId)}`;
  const live = file.status.status !== 'Deleted';
  return (
    <section aria-labelledby="file-title" class="file-details">
      {back}
      <div class="file-head">
        <FileIcon kind={kindOf(file.name)} />
        <ScreenTitle id="file-title">{file.title || file.name}</ScreenTitle>
      </div>
      <div class="actions">
        {file.contentUrl ? (
          <a class="button" href={file.contentUrl} download={file.name}>
            Download
          </a>
        ) : null}
        {owner && live ? (
          <>
            <button type="button" class="secondary" aria-pressed={editing} onClick={() => setEditing(!editing)}>
              Edit details
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() =>
                void change(
                  setPublic(file.fileId, !file.contentPublic),
                  file.contentPublic ? 'The public link is off' : 'Anyone with the public link can open it',
                )
              }
            >
              {file.contentPublic ? 'Make private' : 'Make public'}
            </button>
            {file.status.status === 'Completed' ? (
              <button type="button" class="secondary" onClick={() => setLinking(true)}>
                Share link
              </button>
            ) : null}
            <button type="button" class="danger" onClick={() => void remove()}>
              Delete
            </button>
          </>
        ) : null}
      </div>
      <Status {...status} />
      {!live ? (
        <div class="panel notice trashed" role="note">
          <p>
            <strong>{file.name} is in the trash.</strong>{' '}
            {owner ? 'Restore it to use and share it again.' : 'Only its owner can restore it.'}
          </p>
          {owner ? (
            <div class="actions">
              <button type="button" onClick={() => void restore()}>
                Restore
              </button>
              <a class="button secondary" href={href('trash')}>
                Open the trash
              </a>
            </div>
          ) : null}
        </div>
      ) : editing ? (
        <EditDetails
          file={file}
          onDone={(saved, result) => {
            setEditing(false);
            if (saved) setFile(saved);
            if (result) setStatus(result);
          }}
        />
      ) : (
        <Facts file={file} access={owner ? accessWords(file, session.userId, nameOf) : file.contentPublic ? 'Public link' : undefined} />
      )}
      {file.contentPublic ? (
        <p class="public-link">
          Public link: <code>{publicLink}</code>
        </p>
      ) : null}
      {live ? (
        <section aria-labelledby="preview-title">
          <h2 id="preview-title">Preview</h2>
          <Preview file={file} />
        </section>
      ) : null}
      {owner && live ? <Sharing file={file} users={users} ownerId={session.userId} onChange={setFile} /> : null}
      {owner ? <FileLinks fileId={file.fileId} version={linksVersion} /> : null}
      {linking ? (
        <ShareLinkDialog
          fileIds={[file.fileId]}
          label={file.name}
          onClose={() => setLinking(false)}
          onCreated={() => setLinksVersion(linksVersion + 1)}
        />
      ) : null}
    </section>
  );
}
