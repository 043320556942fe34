// The files of one page, as a list (a table whose rows fold into two lines on a phone) or a grid of
// cards with a thumbnail, or the file type's icon where there is none.
import type { FileSort, SortKey } from '../../files/listing';
import { kindOf } from '../../files/kinds';
import { accessWords } from '../../files/words';
import { FileIcon } from '../../icons';
import { href } from '../../router';
import type { FileRecord } from '../../types';
import { formatBytes, shortDate } from '../../ui';
import { RenameField } from './Rename';
import type { View } from './Toolbar';

export interface ItemsProps {
  files: FileRecord[];
  view: View;
  /** The owner may select files (every bulk action is the owner's). */
  owner: boolean;
  viewerId: string;
  nameOf: (userId: string) => string | undefined;
  thumbnailUrl: (file: FileRecord) => string | undefined;
  selected: Set<string>;
  onSelect: (fileIds: string[], selected: boolean) => void;
  renaming?: string;
  onRenamed: (file?: FileRecord) => void;
  sort: FileSort;
  onSort: (sort: FileSort) => void;
}

/** "31 B · Shared with bob · 14:05": size, who can see it (for the owner), and when it changed. */
function metaWords(file: FileRecord, props: ItemsProps, withDate: boolean): string {
  const access = props.owner ? accessWords(file, props.viewerId, props.nameOf) : undefined;
  return [formatBytes(file.status.size), access, withDate ? shortDate(file.lastUpdated) : undefined].filter(Boolean).join(' · ');
}

function Name({ file, props }: { file: FileRecord; props: ItemsProps }) {
  if (props.renaming === file.fileId) return <RenameField file={file} onDone={props.onRenamed} />;
  return (
    <>
      <a class="file-name" href={href('files', file.fileId)} title={file.name}>
        {file.name}
      </a>
      {file.title ? <span class="file-title">{file.title}</span> : null}
      {file.tags?.length ? (
        <span class="tags">
          {file.tags.map((tag) => (
            <span key={tag} class="tag">
              {tag}
            </span>
          ))}
        </span>
      ) : null}
    </>
  );
}

function Pick({ file, props }: { file: FileRecord; props: ItemsProps }) {
  return (
    <input
      type="checkbox"
      aria-label={`Select ${file.name}`}
      checked={props.selected.has(file.fileId)}
      onChange={(e) => props.onSelect([file.fileId], e.currentTarget.checked)}
    />
  );
}

function Thumbnail({ file, props }: { file: FileRecord; props: ItemsProps }) {
  const url = props.thumbnailUrl(file);
  return <div class="thumb">{url ? <img src={url} alt="" loading="lazy" /> : <FileIcon kind={kindOf(file.name)} />}</div>;
}

function SortHeader({ by, label, props }: { by: SortKey; label: string; props: ItemsProps }) {
  const current = props.sort.by === by;
  // A new column starts where people expect: names A–Z, the newest and the largest first.
  const next = { by, descending: current ? !props.sort.descending : by !== 'name' };
  return (
    <th scope="col" class={`col-${by}`} aria-sort={current ? (props.sort.descending ? 'descending' : 'ascending') : undefined}>
      <button type="button" class="sort-button" onClick={() => props.onSort(next)}>
        {label}
        <span aria-hidden="true">{current ? (props.sort.descending ? ' ↓' : ' ↑') : ''}</span>
      </button>
    </th>
  );
}

function List(props: ItemsProps) {
  const { files, owner } = props;
  const allPicked = files.length > 0 && files.every((file) => props.selected.has(file.fileId));
  return (
    <table class="file-list">
      <thead>
        <tr>
          {owner ? (
            <th scope="col" class="pick">
              <input
                type="checkbox"
                aria-label="Select every file on this page"
                checked={allPicked}
                onChange={(e) =>
                  props.onSelect(
                    files.map((file) => file.fileId),
                    e.currentTarget.checked,
                  )
                }
              />
            </th>
          ) : null}
          <SortHeader by="name" label="Name" props={props} />
          <SortHeader by="size" label="Size" props={props} />
          {owner ? (
            <th scope="col" class="col-access">
              Who can see it
            </th>
          ) : null}
          <SortHeader by="date" label="Modified" props={props} />
        </tr>
      </thead>
      <tbody>
        {files.map((file) => (
          <tr key={file.fileId} class={props.selected.has(file.fileId) ? 'selected' : undefined}>
            {owner ? (
              <td class="pick">
                <Pick file={file} props={props} />
              </td>
            ) : null}
            <td class="name">
              <div class="name-cell">
                <Thumbnail file={file} props={props} />
                <div>
                  <Name file={file} props={props} />
                  {/* On a phone the size, access and date columns fold into this line. */}
                  <span class="meta phone-only">{metaWords(file, props, true)}</span>
                </div>
              </div>
            </td>
            <td class="size">{formatBytes(file.status.size)}</td>
            {owner ? <td class="access">{accessWords(file, props.viewerId, props.nameOf)}</td> : null}
            <td class="date">
              <time dateTime={file.lastUpdated}>{shortDate(file.lastUpdated)}</time>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Grid(props: ItemsProps) {
  return (
    <ul class="file-grid">
      {props.files.map((file) => (
        <li key={file.fileId} class={props.selected.has(file.fileId) ? 'selected' : undefined}>
          <Thumbnail file={file} props={props} />
          {props.owner ? (
            <span class="pick">
              <Pick file={file} props={props} />
            </span>
          ) : null}
          <div class="card-text">
            <Name file={file} props={props} />
            <span class="meta">{metaWords(file, props, false)}</span>
          </div>
        </li>
      ))}
    </ul>
  );
}

export const FileItems = (props: ItemsProps) => (props.view === 'grid' ? <Grid {...props} /> : <List {...props} />);
