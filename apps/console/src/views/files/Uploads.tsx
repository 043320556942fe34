// Uploading: a button, or files dropped anywhere on the files screen; a progress bar for each file.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { errorText } from '../../api';
import { uploadFile } from '../../upload';

interface Upload {
  id: number;
  name: string;
  progress: number;
  /** Waiting: the network is gone, and the upload goes on once it is back. */
  state: 'uploading' | 'waiting' | 'done' | 'failed';
  message?: string;
}

let uploadIds = 0;

/**
 * Wraps the screen so a drop anywhere on it uploads; `onUploaded` runs once a batch is through. The
 * upload button sits in the screen's head, beside `title`.
 */
export function UploadArea({
  title,
  onUploaded,
  children,
}: {
  title: ComponentChildren;
  onUploaded: () => void;
  children: ComponentChildren;
}) {
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [dragging, setDragging] = useState(false);

  const update = (id: number, change: Partial<Upload>) => setUploads((all) => all.map((u) => (u.id === id ? { ...u, ...change } : u)));

  const upload = async (chosen: FileList | null) => {
    const started = Array.from(chosen ?? []).map((file) => ({
      file,
      entry: { id: ++uploadIds, name: file.name, progress: 0, state: 'uploading' as const },
    }));
    if (started.length === 0) return;
    setUploads((all) => [...started.map((s) => s.entry), ...all]);
    await Promise.all(
      started.map(async ({ file, entry }) => {
        try {
          await uploadFile(file, 'console', ({ fraction, waiting }) =>
            update(entry.id, { progress: fraction, state: waiting ? 'waiting' : 'uploading' }),
          );
          update(entry.id, { state: 'done', progress: 1 });
        } catch (e) {
          update(entry.id, { state: 'failed', message: errorText(e) });
        }
      }),
    );
    onUploaded();
  };

  return (
    <div
      class={`upload-area${dragging ? ' dragging' : ''}`}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={(e) => {
        // Leaving for a child of the area is not leaving the area.
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false);
      }}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        void upload(e.dataTransfer?.files ?? null);
      }}
    >
      <div class="screen-head">
        {title}
        <div class="dropzone" role="region" aria-label="Drop files here to upload">
          <span class="muted">Drop files anywhere here, or</span>
          <label class="button">
            Upload files
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
      </div>
      {uploads.length > 0 ? (
        <section class="panel uploads" aria-label="Uploads">
          <ul>
            {uploads.map((u) => (
              <li key={u.id} class={u.state}>
                <span class="upload-name">{u.name}</span>
                <progress max={1} value={u.progress} aria-label={`Upload of ${u.name}`} />
                <span class="upload-state">
                  {u.state === 'uploading'
                    ? `Uploading… ${Math.round(u.progress * 100)}%`
                    : u.state === 'waiting'
                      ? `Waiting for the network… ${Math.round(u.progress * 100)}%`
                      : u.state === 'done'
                        ? 'Uploaded'
                        : `Failed: ${u.message}`}
                </span>
              </li>
            ))}
          </ul>
          {uploads.every((u) => u.state === 'done' || u.state === 'failed') ? (
            <button type="button" class="secondary small" onClick={() => setUploads([])}>
              Clear this list
            </button>
          ) : null}
        </section>
      ) : null}
      {children}
    </div>
  );
}
