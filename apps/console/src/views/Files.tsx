// Files: find (words, type, tag, shared, public), sort, page through any number of them with the
// total shown, as a list or a grid; upload; select several and act on them; rename in place.
// Filters, sort and page live in the address, so going to a file and back returns to the same place.
// `shared` is the Shared screen: the same, kept to the files shared with someone.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { DEFAULT_SORT, NO_FILTER, type FileFilter, type FilePage, type FileSort } from '../files/listing';
import { filesChanged, onFilesChanged } from '../files/changes';
import { listingSource } from '../files/source';
import { href } from '../router';
import type { Session } from '../session';
import type { FileRecord, UserAccount } from '../types';
import { countWords, formatBytes, Pager, ScreenTitle, Status } from '../ui';
import { FileItems } from './files/FileItems';
import { SelectionBar } from './files/SelectionBar';
import { parseSort, sortText, Toolbar, type View } from './files/Toolbar';
import { Unfinished } from './files/Unfinished';
import { UploadArea } from './files/Uploads';

const PAGE = 50;
const VIEW = 'pds.files-view';

/** The address keys of the filter's fields. */
const KEYS: [keyof FileFilter, string][] = [
  ['text', 'q'],
  ['kind', 'type'],
  ['tag', 'tag'],
  ['shared', 'shared'],
  ['public', 'public'],
];

function fromAddress(query: URLSearchParams) {
  const filter = { ...NO_FILTER };
  for (const [field, key] of KEYS) (filter as Record<string, string>)[field] = query.get(key) ?? '';
  const page = Math.max(1, Number.parseInt(query.get('page') ?? '1', 10) || 1);
  return { filter: filter as FileFilter, sort: parseSort(query.get('sort')) ?? DEFAULT_SORT, skip: (page - 1) * PAGE };
}

function addressOf(screen: string, filter: FileFilter, sort: FileSort, skip: number): string {
  const query = new URLSearchParams();
  for (const [field, key] of KEYS) if (filter[field]) query.set(key, filter[field]);
  if (sortText(sort) !== sortText(DEFAULT_SORT)) query.set('sort', sortText(sort));
  if (skip > 0) query.set('page', String(skip / PAGE + 1));
  const text = query.toString();
  return `${href(screen)}${text ? `?${text}` : ''}`;
}

/** Where "All files" goes back to: the listing as it was last seen. */
export let filesAddress = href('files');

export function Files({ session, query, shared = false }: { session: Session; query: URLSearchParams; shared?: boolean }) {
  const owner = session.scope === 'owner';
  const screen = shared ? 'shared' : 'files';
  const source = useMemo(() => listingSource(), [session.userId]);
  const initial = useMemo(() => {
    const found = fromAddress(query);
    return shared ? { ...found, filter: { ...found.filter, shared: 'yes' as const } } : found;
  }, []);
  const [filter, setFilter] = useState(initial.filter);
  const [sort, setSort] = useState(initial.sort);
  const [skip, setSkip] = useState(initial.skip);
  const [view, setView] = useState<View>(() => (localStorage.getItem(VIEW) === 'grid' ? 'grid' : 'list'));
  const [page, setPage] = useState<FilePage>();
  // Where the page shown starts: the pager says where the list is, not where it is going.
  const [shownSkip, setShownSkip] = useState(initial.skip);
  const [unfinished, setUnfinished] = useState<FileRecord[]>([]);
  const [users, setUsers] = useState<UserAccount[]>([]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [renaming, setRenaming] = useState<string>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  // Bumped when files changed (here or anywhere: filesChanged), so they are read again.
  const [version, setVersion] = useState(0);
  useEffect(
    () =>
      onFilesChanged(() => {
        source.changed();
        setVersion((v) => v + 1);
      }),
    [],
  );
  const changed = (result: { message?: string; error?: string }) => {
    setStatus(result);
    setSelected(new Set());
    filesChanged();
  };

  useEffect(() => {
    if (owner) call<UserAccount[]>('/users/user').then(setUsers, () => undefined);
  }, [owner]);

  useEffect(() => {
    let current = true;
    source.page({ filter, sort, skip, take: PAGE }).then(
      (found) => {
        if (!current) return;
        // Past the end (the last page's files were deleted): the last page there is.
        if (skip > 0 && skip >= found.total) return setSkip(Math.max(0, Math.ceil(found.total / PAGE) - 1) * PAGE);
        setPage(found);
        setShownSkip(skip);
      },
      (e: unknown) => current && setStatus({ error: errorText(e) }),
    );
    return () => {
      current = false;
    };
  }, [filter, sort, skip, version]);

  useEffect(() => {
    if (shared) return;
    source.unfinished().then(
      (found) => setUnfinished(found.files),
      () => undefined,
    );
  }, [version]);

  useEffect(() => {
    const address = addressOf(screen, shared ? { ...filter, shared: '' } : filter, sort, skip);
    if (!shared) filesAddress = address;
    // Effects run after paint: by then the person may have gone to another screen, whose address stays.
    if ((location.hash === '' && !shared) || location.hash.split('?')[0] === href(screen)) history.replaceState(null, '', address);
  }, [filter, sort, skip]);

  const nameOf = (userId: string) => users.find((user) => user.userId === userId)?.username;
  const select = (fileIds: string[], on: boolean) =>
    setSelected((before) => {
      const after = new Set(before);
      fileIds.forEach((fileId) => (on ? after.add(fileId) : after.delete(fileId)));
      return after;
    });
  const selectAll = async () => {
    try {
      setSelected(new Set(await source.allIds({ filter, sort })));
    } catch (error) {
      setStatus({ error: errorText(error) });
    }
  };
  const filtered = KEYS.some(([field]) => filter[field] !== '' && !(shared && field === 'shared'));
  const resort = (next: FileSort) => {
    setSort(next);
    setSkip(0);
  };
  const [only] = selected.size === 1 ? selected : [];
  // Nothing at all yet: the screen is the invitation to upload, without tools for finding.
  const empty = page?.total === 0 && !filtered;

  return (
    <section aria-labelledby="files-title" class="files-screen">
      <UploadArea
        onUploaded={filesChanged}
        title={
          <>
            <ScreenTitle id="files-title">{shared ? 'Shared' : owner ? 'Files' : 'Shared with you'}</ScreenTitle>
            {page && !empty ? (
              <p class="summary">
                {countWords(page.total)}
                {filtered ? ' match' : ''} · {formatBytes(page.totalBytes)}
              </p>
            ) : null}
          </>
        }
      >
        <Unfinished files={unfinished} owner={owner} onChanged={changed} />
        {empty ? null : (
          <Toolbar
            filter={filter}
            sort={sort}
            view={view}
            tags={page?.tags ?? []}
            owner={owner && !shared}
            onFilter={(next) => {
              setFilter(shared ? { ...next, shared: 'yes' } : next);
              setSkip(0);
            }}
            onSort={resort}
            onView={(next) => {
              localStorage.setItem(VIEW, next);
              setView(next);
            }}
          />
        )}
        {owner && selected.size > 0 ? (
          <SelectionBar
            selected={[...selected]}
            total={page?.total ?? 0}
            users={users}
            onSelectAll={() => void selectAll()}
            onClear={() => setSelected(new Set())}
            onRename={page?.files.some((file) => file.fileId === only) ? () => setRenaming(only) : undefined}
            onChanged={changed}
          />
        ) : null}
        <Status {...status} message={status.message ?? (page ? undefined : 'Loading…')} />
        {page && page.total > 0 ? (
          <>
            <FileItems
              files={page.files}
              view={view}
              owner={owner}
              viewerId={session.userId}
              nameOf={nameOf}
              thumbnailUrl={source.thumbnailUrl}
              selected={selected}
              onSelect={select}
              renaming={renaming}
              onRenamed={(file) => {
                setRenaming(undefined);
                if (file) changed({ message: `Renamed to ${file.name}` });
              }}
              sort={sort}
              onSort={resort}
            />
            <Pager label="Pages of files" skip={shownSkip} take={PAGE} total={page.total} onSkip={setSkip} />
          </>
        ) : page && filtered ? (
          <p class="empty">
            No files match.{' '}
            <button type="button" class="link" onClick={() => setFilter(shared ? { ...NO_FILTER, shared: 'yes' } : NO_FILTER)}>
              Show every file
            </button>
          </p>
        ) : page ? (
          <p class="empty">
            {shared
              ? 'You have not shared anything yet. Open a file to share it with someone.'
              : owner
                ? 'Nothing here yet. Upload photos, documents, anything: they stay yours, and only you decide who sees them.'
                : 'Nobody has shared a file with you yet.'}
          </p>
        ) : null}
      </UploadArea>
    </section>
  );
}
