// Finding files: words, sorting, list or grid, and the filters (type, tag, shared, public).
import { useState } from 'preact/hooks';
import { KIND_LABELS, type FileKind } from '../../files/kinds';
import { NO_FILTER, type Choice, type FileFilter, type FileSort, type SortKey } from '../../files/listing';

export type View = 'list' | 'grid';

const SORTS: [string, string][] = [
  ['date-desc', 'Newest first'],
  ['date-asc', 'Oldest first'],
  ['name-asc', 'Name A–Z'],
  ['name-desc', 'Name Z–A'],
  ['size-desc', 'Largest first'],
  ['size-asc', 'Smallest first'],
];

export const sortText = (sort: FileSort) => `${sort.by}-${sort.descending ? 'desc' : 'asc'}`;

export function parseSort(text: string | null): FileSort | undefined {
  const [by, direction] = (text ?? '').split('-');
  if (!SORTS.some(([value]) => value === text)) return undefined;
  return { by: by as SortKey, descending: direction === 'desc' };
}

function ChoiceSelect({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: [string, string][];
  onChange: (value: string) => void;
}) {
  const id = `filter-${label.toLowerCase().replace(/ /g, '-')}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {options.map(([option, text]) => (
          <option key={option} value={option}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

export function Toolbar({
  filter,
  sort,
  view,
  tags,
  owner,
  onFilter,
  onSort,
  onView,
}: {
  filter: FileFilter;
  sort: FileSort;
  view: View;
  tags: string[];
  owner: boolean;
  onFilter: (filter: FileFilter) => void;
  onSort: (sort: FileSort) => void;
  onView: (view: View) => void;
}) {
  const active = (['kind', 'tag', 'shared', 'public'] as const).filter((key) => filter[key] !== '').length;
  const [open, setOpen] = useState(active > 0);
  const set = (change: Partial<FileFilter>) => onFilter({ ...filter, ...change });
  const yesNo = (yes: string, no: string): [string, string][] => [
    ['', 'Any'],
    ['yes', yes],
    ['no', no],
  ];

  return (
    <div class="toolbar">
      <div class="toolbar-row">
        <input
          class="search-box"
          type="search"
          aria-label="Find files"
          placeholder="Find by name or title"
          value={filter.text}
          onInput={(e) => set({ text: e.currentTarget.value })}
        />
        <button type="button" class="secondary" aria-expanded={open} aria-controls="file-filters" onClick={() => setOpen(!open)}>
          Filters{active ? ` (${active})` : ''}
        </button>
        <select class="sort" aria-label="Sort" value={sortText(sort)} onChange={(e) => onSort(parseSort(e.currentTarget.value) ?? sort)}>
          {SORTS.map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </select>
        <div class="segmented" role="group" aria-label="Show as">
          {(['list', 'grid'] as const).map((option) => (
            <button key={option} type="button" class="secondary" aria-pressed={view === option} onClick={() => onView(option)}>
              {option === 'list' ? 'List' : 'Grid'}
            </button>
          ))}
        </div>
      </div>
      {open ? (
        <div id="file-filters" class="filters" role="group" aria-label="Filters">
          <ChoiceSelect
            label="Type"
            value={filter.kind}
            options={[['', 'Any type'], ...KIND_LABELS]}
            onChange={(kind) => set({ kind: kind as FileKind | '' })}
          />
          <ChoiceSelect
            label="Tag"
            value={filter.tag}
            options={[['', 'Any tag'], ...[...new Set([...tags, filter.tag].filter(Boolean))].map((tag): [string, string] => [tag, tag])]}
            onChange={(tag) => set({ tag })}
          />
          {owner ? (
            <ChoiceSelect
              label="Shared"
              value={filter.shared}
              options={yesNo('Shared with someone', 'Not shared')}
              onChange={(shared) => set({ shared: shared as Choice })}
            />
          ) : null}
          <ChoiceSelect
            label="Public link"
            value={filter.public}
            options={yesNo('Has a public link', 'No public link')}
            onChange={(value) => set({ public: value as Choice })}
          />
          {active ? (
            <button type="button" class="link" onClick={() => onFilter({ ...NO_FILTER, text: filter.text })}>
              Clear filters
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
