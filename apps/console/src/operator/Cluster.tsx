// The cluster: the processes running now, the gateway worker's queues with their failed jobs (inspect
// one, retry it), what is stored, and the instances not (yet) registered with dex; and the usage recount.
import { useEffect, useState } from 'preact/hooks';
import { href } from '../router';
import { formatBytes, formatDate, ScreenTitle, shortDate, Status, type StatusLine } from '../ui';
import { admin, failureText } from './api';
import { DEX_WORDS } from './words';

interface Overview {
  processes: { kind: string; id: string; host: string; pid: number; startedAt: string; seenAt: string; queues?: string[] }[];
  queues: { name: string; waiting: number; active: number; retrying: number; scheduled: number; failed: number }[];
  storage: { store: string; files: number; fileBytes: number; records: number; recordBytes: number; databaseBytes: number };
  dex: {
    counts: { pending: number; registered: number; failed: number };
    waiting: { address: string; dexState: string; createdAt: string }[];
  };
}

interface Job {
  id: string;
  queue: string;
  state: string;
  attemptsMade: number;
  attempts: number;
  failedReason?: string;
  createdAt: string;
  finishedAt?: string;
  data?: unknown;
  stacktrace?: string[];
}

const KINDS: Record<string, string> = { gateway: 'Gateway', 'gateway-worker': 'Gateway worker', dex: 'Dex', 'dex-worker': 'Dex worker' };

function FailedJobs({ queue, onChanged }: { queue: string; onChanged: () => void }) {
  const [jobs, setJobs] = useState<{ total: number; jobs: Job[] }>();
  const [open, setOpen] = useState<Job>();
  const [status, setStatus] = useState<StatusLine>({});
  const load = () =>
    admin<{ total: number; jobs: Job[] }>(`/queues/${queue}/failed?take=50`).then(setJobs, (e: unknown) =>
      setStatus({ error: failureText(e) }),
    );
  useEffect(() => void load(), [queue]);
  const inspect = async (id: string) => setOpen(await admin<Job>(`/queues/${queue}/jobs/${encodeURIComponent(id)}`));
  const retry = async (id: string) => {
    try {
      await admin(`/queues/${queue}/jobs/${encodeURIComponent(id)}/retry`, { method: 'POST' });
      setStatus({ message: `Job ${id} is queued again.` });
      setOpen(undefined);
      await load();
      onChanged();
    } catch (e) {
      setStatus({ error: failureText(e) });
    }
  };
  return (
    <section class="card" aria-labelledby="failed-title">
      <h2 id="failed-title">Failed jobs of {queue}</h2>
      <Status {...status} />
      {jobs && jobs.jobs.length === 0 ? <p class="muted">None.</p> : null}
      <ul class="plain jobs">
        {jobs?.jobs.map((job) => (
          <li key={job.id}>
            <div>
              <strong>{job.id}</strong> <span class="muted">{shortDate(job.finishedAt ?? job.createdAt)}</span>
            </div>
            <div class="error-text">{job.failedReason}</div>
            <div class="actions">
              <button type="button" class="secondary small" onClick={() => void inspect(job.id)}>
                Inspect
              </button>
              <button type="button" class="small" onClick={() => void retry(job.id)}>
                Retry
              </button>
            </div>
          </li>
        ))}
      </ul>
      {open ? (
        <div class="job-details">
          <h3>Job {open.id}</h3>
          <p>
            {open.state}, tried {open.attemptsMade} of {open.attempts} times
          </p>
          <pre tabIndex={0} aria-label="What the job carries">
            {JSON.stringify(open.data, null, 2)}
          </pre>
          {open.stacktrace?.length ? (
            <pre tabIndex={0} aria-label="Why it failed">
              {open.stacktrace.at(-1)}
            </pre>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

export function Cluster() {
  const [overview, setOverview] = useState<Overview>();
  const [queue, setQueue] = useState<string>();
  const [status, setStatus] = useState<StatusLine>({});
  const load = () => admin<Overview>('/cluster').then(setOverview, (e: unknown) => setStatus({ error: failureText(e) }));
  useEffect(() => void load(), []);
  const verify = async () => {
    setStatus({ message: 'Recounting every instance…' });
    try {
      const report = await admin<{ checked: number; drift: { address: string }[] }>('/usage/verify', { method: 'POST' });
      setStatus({
        message: report.drift.length
          ? `${report.drift.length} of ${report.checked} instances drifted: ${report.drift.map((d) => d.address).join(', ')}`
          : `${report.checked} instances recounted: their usage is exact.`,
      });
    } catch (e) {
      setStatus({ error: failureText(e) });
    }
  };
  if (!overview) return <Status {...status} message={status.error ? undefined : 'Loading…'} />;
  const { storage, dex } = overview;
  return (
    <section aria-labelledby="cluster-title">
      <div class="screen-head">
        <ScreenTitle id="cluster-title">Cluster</ScreenTitle>
        <button type="button" class="secondary" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <Status {...status} />
      <div class="panels">
        <section class="card" aria-labelledby="processes-title">
          <h2 id="processes-title">Running processes</h2>
          {overview.processes.length === 0 ? <p class="muted">None has reported in the last 30 seconds.</p> : null}
          <ul class="plain">
            {overview.processes.map((p) => (
              <li key={p.id}>
                {KINDS[p.kind] ?? p.kind}{' '}
                <span class="muted">
                  on {p.host}, process {p.pid}, since {shortDate(p.startedAt)}
                </span>
              </li>
            ))}
          </ul>
        </section>
        <section class="card" aria-labelledby="storage-title">
          <h2 id="storage-title">Storage</h2>
          <dl class="facts">
            <dt>Files</dt>
            <dd>
              {storage.files.toLocaleString('en')}, {formatBytes(storage.fileBytes)} ({storage.store === 's3' ? 'S3' : 'local disk'})
            </dd>
            <dt>Records</dt>
            <dd>
              {storage.records.toLocaleString('en')}, {formatBytes(storage.recordBytes)}
            </dd>
            <dt>Database</dt>
            <dd>{formatBytes(storage.databaseBytes)}</dd>
          </dl>
          <button type="button" class="secondary" onClick={() => void verify()}>
            Verify usage
          </button>
        </section>
      </div>
      <section class="card" aria-labelledby="queues-title">
        <h2 id="queues-title">Job queues</h2>
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Queue</th>
                <th scope="col">Waiting</th>
                <th scope="col">Running</th>
                <th scope="col">Retrying</th>
                <th scope="col">Failed</th>
              </tr>
            </thead>
            <tbody>
              {overview.queues.map((q) => (
                <tr key={q.name}>
                  <td>{q.name}</td>
                  <td>{q.waiting}</td>
                  <td>{q.active}</td>
                  <td>{q.retrying}</td>
                  <td>
                    {q.failed > 0 ? (
                      <button
                        type="button"
                        class="link"
                        onClick={() => setQueue(q.name)}
                        aria-label={`${q.failed} failed in ${q.name}: show them`}
                      >
                        {q.failed} failed
                      </button>
                    ) : (
                      0
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      {queue ? <FailedJobs key={queue} queue={queue} onChanged={() => void load()} /> : null}
      <section class="card" aria-labelledby="dex-title">
        <h2 id="dex-title">Registration with dex</h2>
        <p>
          {dex.counts.registered} registered, {dex.counts.pending} registering, {dex.counts.failed} failed.
        </p>
        <ul class="plain">
          {dex.waiting.map((w) => (
            <li key={w.address}>
              <a href={href('instances', w.address)}>{w.address}</a>{' '}
              <span class="muted">
                {DEX_WORDS[w.dexState]}, since {formatDate(w.createdAt)}
              </span>
            </li>
          ))}
        </ul>
      </section>
    </section>
  );
}
