// Owner only: "Your data". Download all my data (an export of the whole instance, with its progress and
// the link once ready) and, on an empty instance, import an archive from another data store (upload
// progress, then the restore's progress and its result or the reason it was refused).
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { putBytes } from '../upload';
import { countWords, formatBytes, formatDate, ScreenTitle, Status } from '../ui';

interface ExportJob {
  exportId: string;
  status: 'running' | 'ready' | 'failed';
  bytes: number;
  files: number;
  records: number;
  progress: number;
  createdAt: string;
  downloadUrl?: string;
  expiresAt?: string;
  error?: string;
}

interface ImportJob {
  importId: string;
  status: 'uploading' | 'running' | 'done' | 'failed';
  progress: number;
  files: number;
  records: number;
  uploadUrl?: string;
  counts?: Record<string, number>;
  report?: { problem: string; path?: string; message: string };
}

/** What an import restored, in a fixed order and people's words: "Imported 2 accounts, 4 files and 1 record." */
const KINDS: [string, string, string][] = [
  ['users', 'account', 'accounts'],
  ['apps', 'app', 'apps'],
  ['bundles', 'bundle', 'bundles'],
  ['debits', 'data debit', 'data debits'],
  ['files', 'file', 'files'],
  ['records', 'record', 'records'],
];
function importedWords(counts: Record<string, number>): string {
  const parts = KINDS.filter(([kind]) => counts[kind]).map(([kind, one, many]) => countWords(counts[kind] as number, one, many));
  if (parts.length === 0) return 'Imported. The archive was empty.';
  const last = parts.pop() as string;
  return `Imported ${parts.length > 0 ? `${parts.join(', ')} and ${last}` : last}.`;
}

const EXPORT = '/api/v2.6/export';
const IMPORT = '/api/v2.6/import';
const POLL_MS = 1000;

/** Calls `poll` every second while `running`; stops when the screen goes. */
function usePolling(running: boolean, poll: () => Promise<void>) {
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(() => void poll(), POLL_MS);
    return () => clearInterval(timer);
  }, [running]);
}

export function Portability() {
  return (
    <section aria-labelledby="portability-title">
      <div class="screen-head">
        <ScreenTitle id="portability-title">Your data</ScreenTitle>
      </div>
      <DownloadAll />
      <ImportArchive />
    </section>
  );
}

/** Also on the closing screen: the owner may take their data out during the grace period. */
export function DownloadAll() {
  const [exports, setExports] = useState<ExportJob[]>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const load = async () => {
    try {
      setExports(await call<ExportJob[]>(EXPORT));
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };
  useEffect(() => void load(), []);
  const running = exports?.find((job) => job.status === 'running');
  usePolling(running !== undefined, load);

  const start = async () => {
    setStatus({});
    try {
      await call<ExportJob>(EXPORT, { method: 'POST' });
      await load();
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };
  // The address in the list lives a few minutes: a fresh one is asked for at the click.
  const download = async (job: ExportJob) => {
    try {
      const fresh = await call<ExportJob>(`${EXPORT}/${job.exportId}`);
      if (fresh.downloadUrl) location.href = fresh.downloadUrl;
      else setStatus({ error: 'This archive is no longer available. Prepare a new one.' });
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  return (
    <div class="panel portability">
      <h3>Download all my data</h3>
      <p class="muted">
        One archive (.tar.gz) of everything this data store keeps for you: your files, your data records with their links, bundles, data
        debits, apps, accounts and your activity log — never a password or a key. Each archive can be downloaded until the time shown beside
        it.
      </p>
      {running ? (
        <div>
          <label for="export-progress">
            Preparing your archive: {countWords(running.files)}, {countWords(running.records, 'record')}
          </label>
          <progress id="export-progress" max={1} value={running.progress} />
        </div>
      ) : (
        <button type="button" onClick={() => void start()}>
          Prepare a download of all my data
        </button>
      )}
      <Status {...status} />
      {exports && exports.length > 0 && (
        <ul class="portability-list">
          {exports
            .filter((job) => job.status !== 'running')
            .map((job) => (
              <li key={job.exportId}>
                {job.status === 'ready' && job.downloadUrl ? (
                  <a
                    href={job.downloadUrl}
                    onClick={(e) => {
                      e.preventDefault();
                      void download(job);
                    }}
                  >
                    Download the archive of {formatDate(job.createdAt)} ({formatBytes(job.bytes)})
                  </a>
                ) : job.status === 'ready' ? (
                  <span class="muted">Archive of {formatDate(job.createdAt)}: expired</span>
                ) : (
                  <span class="error">
                    Archive of {formatDate(job.createdAt)} failed: {job.error}
                  </span>
                )}
                {job.expiresAt && job.downloadUrl && <span class="muted"> — until {formatDate(job.expiresAt)}</span>}
              </li>
            ))}
        </ul>
      )}
    </div>
  );
}

function ImportArchive() {
  const [job, setJob] = useState<ImportJob>();
  const [upload, setUpload] = useState<number>();
  const [error, setError] = useState<string>();
  const running = job?.status === 'running';
  usePolling(running, async () => {
    if (!job) return;
    try {
      setJob(await call<ImportJob>(`${IMPORT}/${job.importId}`));
    } catch (e) {
      setError(errorText(e));
    }
  });

  const importFile = async (file: File | undefined) => {
    if (!file) return;
    setError(undefined);
    setJob(undefined);
    try {
      const created = await call<ImportJob>(IMPORT, { method: 'POST' });
      if (!created.uploadUrl) throw new Error('The server gave no upload address');
      setUpload(0);
      await putBytes(created.uploadUrl, file, setUpload);
      setUpload(undefined);
      setJob(await call<ImportJob>(`${IMPORT}/${created.importId}/complete`, { method: 'PUT' }));
    } catch (e) {
      setUpload(undefined);
      setError(errorText(e));
    }
  };

  return (
    <div class="panel portability">
      <h3>Import an archive</h3>
      <p class="muted">
        Moving here from another data store? Import the archive you downloaded there. This works on a new, empty data store only; accounts
        come back disabled and apps wait for you to set them up again.
      </p>
      <label for="import-file">Archive (.tar.gz)</label>
      <input
        id="import-file"
        type="file"
        accept=".tar.gz,.tgz,application/gzip"
        disabled={upload !== undefined || running}
        onChange={(e) => void importFile(e.currentTarget.files?.[0])}
      />
      {upload !== undefined && (
        <div>
          <label for="import-upload">Uploading</label>
          <progress id="import-upload" max={1} value={upload} />
        </div>
      )}
      {running && (
        <div>
          <label for="import-progress">
            {job.progress < 0.5 ? 'Checking the archive' : `Restoring: ${countWords(job.files)}, ${countWords(job.records, 'record')}`}
          </label>
          <progress id="import-progress" max={1} value={job.progress} />
        </div>
      )}
      {job?.status === 'done' && <Status message={importedWords(job.counts ?? {})} />}
      {job?.status === 'failed' && (
        <Status error={`The archive was refused and nothing was changed: ${job.report?.message ?? 'unknown reason'}.`} />
      )}
      {error && <Status error={error} />}
    </div>
  );
}
