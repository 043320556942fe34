// Renaming a file where its name is shown: Enter saves, Escape puts the name back.
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from '../../api';
import { saveDetails } from '../../files/actions';
import type { FileRecord } from '../../types';

export function RenameField({ file, onDone }: { file: FileRecord; onDone: (renamed?: FileRecord) => void }) {
  const [name, setName] = useState(file.name);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    // The name without its extension is selected, ready to be typed over.
    const dot = file.name.lastIndexOf('.');
    input.current?.focus();
    input.current?.setSelectionRange(0, dot > 0 ? dot : file.name.length);
  }, []);

  const save = async (event: Event) => {
    event.preventDefault();
    const wanted = name.trim();
    if (!wanted || wanted === file.name) return onDone();
    setBusy(true);
    try {
      onDone(await saveDetails(file, { name: wanted }));
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  };

  return (
    <form class="rename" onSubmit={save} onKeyDown={(e) => e.key === 'Escape' && onDone()}>
      <input
        ref={input}
        aria-label={`New name for ${file.name}`}
        value={name}
        maxLength={1024}
        required
        onInput={(e) => setName(e.currentTarget.value)}
      />
      <button type="submit" class="small" disabled={busy}>
        Save
      </button>
      <button type="button" class="secondary small" onClick={() => onDone()}>
        Cancel
      </button>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
