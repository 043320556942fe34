// Files: search, upload with a progress bar each (button or drag and drop), and the list.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { href } from '../router';
import type { FileRecord } from '../types';
import { formatBytes, formatDate, ScreenTitle, Status } from '../ui';
import { uploadFile } from '../upload';

interface Search {
  name: string;
  source: string;
  tags: string;
  title: string;
  description: string;
  status: '' | 'New' | 'Completed' | 'Deleted';
}

const EMPTY: Search = { name: '', source: '', tags: '', title: '', description: '', status: '' };

function template(search: Search) {
  const tags = search.tags
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);
  return {
    ...(search.name ? { name: search.name } : {}),
    ...(search.source ? { source: search.source } : {}),
    ...(tags.length ? { tags } : {}),
    ...(search.title ? { title: search.title } : {}),
    ...(search.description ? { description: search.description } : {}),
    ...(search.status ? { status: { status: search.status } } : {}),
  };
}

interface Upload {
  id: number;
  name: string;
  progress: number;
  state: 'uploading' | 'done' | 'failed';
  message?: string;
}

let uploadIds = 0;

export function Files() {
  const [search, setSearch] = useState<Search>(EMPTY);
  const [files, setFiles] = useState<FileRecord[]>();
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [error, setError] = useState<string>();
  const [dragging, setDragging] = useState(false);

  const load = async (criteria = search) => {
    try {
      setFiles(await call<FileRecord[]>('/api/v2.6/files/search?take=200', { method: 'POST', body: template(criteria) }));
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    }
  };
  useEffect(() => void load(), []);

  const update = (id: number, change: Partial<Upload>) => setUploads((all) => all.map((u) => (u.id === id ? { ...u, ...change } : u)));

  const upload = async (chosen: FileList | null) => {
    const list = Array.from(chosen ?? []);
    const started = list.map((file) => ({ file, entry: { id: ++uploadIds, name: file.name, progress: 0, state: 'uploading' as const } }));
    setUploads((all) => [...started.map((s) => s.entry), ...all]);
    await Promise.all(
      started.map(async ({ file, entry }) => {
        try {
          await uploadFile(file, 'console', (progress) => update(entry.id, { progress }));
          update(entry.id, { state: 'done', progress: 1 });
        } catch (e) {
          update(entry.id, { state: 'failed', message: errorText(e) });
        }
      }),
    );
    await load();
  };

  const field = (key: keyof Search, label: string) => (
    <label>
      {label}
      <input name={key} value={search[key]} onInput={(e) => setSearch({ ...search, [key]: e.currentTarget.value })} />
    </label>
  );

  return (
    <section aria-labelledby="files-title">
      <ScreenTitle>Files</ScreenTitle>

      <div
        class={`dropzone${dragging ? ' dragging' : ''}`}
        role="region"
        aria-label="Upload files"
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          void upload(e.dataTransfer?.files ?? null);
        }}
      >
        <p>Drop files here, or</p>
        <label class="button">
          Choose files to upload
          <input
            class="visually-hidden"
            type="file"
            multiple
            name="upload"
            onChange={(e) => {
              const input = e.currentTarget;
              void upload(input.files).then(() => (input.value = ''));
            }}
          />
        </label>
      </div>

      {uploads.length > 0 ? (
        <ul class="uploads" aria-label="Uploads">
          {uploads.map((u) => (
            <li key={u.id} class={u.state}>
              <span>{u.name}</span>
              <progress max={1} value={u.progress} aria-label={`Upload of ${u.name}`} />
              <span>
                {u.state === 'uploading' ? `${Math.round(u.progress * 100)}%` : u.state === 'done' ? 'Uploaded' : `Failed: ${u.message}`}
              </span>
            </li>
          ))}
        </ul>
      ) : null}

      <details class="search">
        <summary>Search</summary>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void load();
          }}
        >
          {field('name', 'Name')}
          {field('source', 'Source')}
          {field('tags', 'Tags (comma-separated)')}
          {field('title', 'Title words')}
          {field('description', 'Description words')}
          <label>
            Status
            <select
              name="status"
              value={search.status}
              onChange={(e) => setSearch({ ...search, status: e.currentTarget.value as Search['status'] })}
            >
              <option value="">New or completed</option>
              <option value="New">New</option>
              <option value="Completed">Completed</option>
              <option value="Deleted">Deleted</option>
            </select>
          </label>
          <div class="actions">
            <button type="submit">Search</button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setSearch(EMPTY);
                void load(EMPTY);
              }}
            >
              Clear
            </button>
          </div>
        </form>
      </details>

      <Status error={error} message={files ? `${files.length} file${files.length === 1 ? '' : 's'}` : 'Loading…'} />
      {files && files.length > 0 ? (
        <table class="files">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Title</th>
              <th scope="col">Status</th>
              <th scope="col">Size</th>
              <th scope="col">Access</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {files.map((file) => (
              <tr key={file.fileId}>
                <td data-label="Name">
                  <a href={href('files', file.fileId)}>{file.name}</a>
                  {file.tags?.length ? (
                    <span class="tags">
                      {file.tags.map((tag) => (
                        <span class="tag">{tag}</span>
                      ))}
                    </span>
                  ) : null}
                </td>
                <td data-label="Title">{file.title ?? ''}</td>
                <td data-label="Status">{file.status.status}</td>
                <td data-label="Size">{formatBytes(file.status.size)}</td>
                <td data-label="Access">{file.contentPublic ? 'Public' : 'Private'}</td>
                <td data-label="Updated">{formatDate(file.lastUpdated)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
