// The photo timeline's layout, worked out before any picture loads (pure, so it is tested without a
// browser): pictures grouped by day under month headings, each day a justified grid — rows of pictures
// at their own proportions, every row as wide as the column, of about the same height. Every heading
// and row gets its place (top, height), so the screen draws only the rows in view (see Photos.tsx).
export interface Sized {
  date: string;
  /** The clock where it was taken, without a zone, when the picture says. */
  localDate?: string;
  width?: number;
  height?: number;
}

export interface Tile {
  /** The picture's index in the list given. */
  index: number;
  left: number;
  width: number;
}

export type Block =
  | { kind: 'month'; key: string; label: string; top: number; height: number }
  | { kind: 'day'; key: string; label: string; top: number; height: number }
  | { kind: 'row'; key: string; top: number; height: number; tiles: Tile[] };

export interface Timeline {
  blocks: Block[];
  height: number;
}

export interface LayoutOptions {
  /** The column's width in CSS pixels. */
  width: number;
  /** The height rows aim at; a row is shrunk or grown from it to fill the width exactly. */
  rowHeight: number;
  gap: number;
  monthHeight: number;
  dayHeight: number;
  /** The day headings in UTC rather than the browser's time zone (for tests that run anywhere). */
  utc?: boolean;
}

/** Width over height; a square for a picture of unknown size. */
const aspect = (item: Sized) => (item.width && item.height ? item.width / item.height : 1);

/**
 * "2025-07-14" of the date, in the browser's time zone (or UTC). From the date's fields, not
 * toLocaleDateString: that makes a formatter per call, a second for ten thousand pictures.
 */
function dayKey(date: Date, utc = false): string {
  const [year, month, day] = utc
    ? [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()]
    : [date.getFullYear(), date.getMonth(), date.getDate()];
  return `${year}-${String(month + 1).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** Formatters are costly to make: one of each kind. */
const formats = new Map<string, Intl.DateTimeFormat>();
function format(date: Date, options: Intl.DateTimeFormatOptions, utc: boolean): string {
  const key = JSON.stringify([options, utc]);
  let formatter = formats.get(key);
  if (!formatter) formats.set(key, (formatter = new Intl.DateTimeFormat(undefined, { ...options, ...(utc ? { timeZone: 'UTC' } : {}) })));
  return formatter.format(date);
}

/** "July 2025". */
export const monthLabel = (date: Date, utc = false) => format(date, { month: 'long', year: 'numeric' }, utc);

/** "Mon 14 Jul", with the year when it is not this year's. */
export function dayLabel(date: Date, now = new Date(), utc = false): string {
  const sameYear = dayKey(date, utc).slice(0, 4) === dayKey(now, utc).slice(0, 4);
  return format(date, { weekday: 'short', day: 'numeric', month: 'short', ...(sameYear ? {} : { year: 'numeric' }) }, utc);
}

/** The rows of one day's pictures (indexes into `items`), justified to `width`. */
function justify(items: Sized[], indexes: number[], { width, rowHeight, gap }: LayoutOptions): { height: number; tiles: Tile[] }[] {
  const rows: { height: number; tiles: Tile[] }[] = [];
  let row: number[] = [];
  let aspects = 0;
  const place = (members: number[], height: number) => {
    let left = 0;
    const tiles = members.map((index) => {
      const tile = { index, left, width: aspect(items[index] as Sized) * height };
      left += tile.width + gap;
      return tile;
    });
    rows.push({ height, tiles });
  };
  for (const index of indexes) {
    row.push(index);
    aspects += aspect(items[index] as Sized);
    const gaps = gap * (row.length - 1);
    // Full: at the aimed height the row would reach the width; shrink it to fit exactly.
    if (aspects * rowHeight + gaps >= width) {
      place(row, (width - gaps) / aspects);
      row = [];
      aspects = 0;
    }
  }
  // The day's last row keeps the aimed height (not stretched across the column).
  if (row.length > 0) place(row, Math.min(rowHeight, (width - gap * (row.length - 1)) / aspects));
  return rows;
}

/**
 * When a picture is shown as taken: the clock where it was taken when the picture says, read as the
 * viewer's own (so a picture taken at 23:30 in Tokyo is under that day in Lisbon too), else its date.
 */
export function shownDate(item: Sized, utc = false): Date {
  return item.localDate ? new Date(utc ? `${item.localDate}Z` : item.localDate) : new Date(item.date);
}

/** The whole timeline of `items` (newest first, as the server lists them). */
export function layoutTimeline(items: Sized[], options: LayoutOptions): Timeline {
  const blocks: Block[] = [];
  let top = 0;
  let month = '';
  let day: number[] = [];
  let dayDate: Date | undefined;
  const endDay = () => {
    if (!dayDate || day.length === 0) return;
    const key = dayKey(dayDate, options.utc);
    blocks.push({ kind: 'day', key: `d${key}`, label: dayLabel(dayDate, undefined, options.utc), top, height: options.dayHeight });
    top += options.dayHeight;
    justify(items, day, options).forEach((row, n) => {
      blocks.push({ kind: 'row', key: `r${key}-${n}`, top, height: row.height, tiles: row.tiles });
      top += row.height + options.gap;
    });
    day = [];
  };
  items.forEach((item, index) => {
    const date = shownDate(item, options.utc);
    const key = dayKey(date, options.utc);
    if (!dayDate || dayKey(dayDate, options.utc) !== key) {
      endDay();
      dayDate = date;
      if (key.slice(0, 7) !== month) {
        month = key.slice(0, 7);
        blocks.push({ kind: 'month', key: `m${month}`, label: monthLabel(date, options.utc), top, height: options.monthHeight });
        top += options.monthHeight;
      }
    }
    day.push(index);
  });
  endDay();
  return { blocks, height: top };
}

/** The blocks that overlap [from, to) (blocks are in order of `top`): a binary search, then a walk. */
export function blocksBetween(blocks: Block[], from: number, to: number): Block[] {
  let low = 0;
  let high = blocks.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    const block = blocks[middle] as Block;
    if (block.top + block.height < from) low = middle + 1;
    else high = middle;
  }
  const shown: Block[] = [];
  for (let i = low; i < blocks.length && (blocks[i] as Block).top < to; i++) shown.push(blocks[i] as Block);
  return shown;
}
