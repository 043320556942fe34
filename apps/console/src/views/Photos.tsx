// Photos: every picture that has a thumbnail (images; videos once theirs exist), newest first, by day
// under month headings, as a justified grid; one opens over the whole screen (#/photos/<fileId>).
// Pages are read as the grid nears its end (infinite scroll), and only the rows near the window are in
// the page at any time, so ten thousand pictures scroll as smoothly as ten (docs/console.md has the
// measurements). The layout is worked out from the sizes the server gives before any picture loads.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { errorText } from '../api';
import { blocksBetween, layoutTimeline, type Block } from '../photos/layout';
import { readPhotos, type Photo } from '../photos/source';
import { href } from '../router';
import { countWords, ScreenTitle, Status } from '../ui';
import { Viewer } from './photos/Viewer';

interface Page {
  cursor: string | undefined;
  photos: Photo[];
  /** When its signed addresses were made (they expire: the page is read again when shown after that). */
  readAt: number;
}

/** Signed addresses live SIGNED_URL_TTL (300 s by default); a page older than this is read again. */
const FRESH_MS = 240_000;
/** How far beyond the window rows are drawn, in windows: scrolling finds them there already. */
const AHEAD = 1.5;
/** The drawn range moves in steps of this many pixels, so scrolling re-renders only now and then. */
const STEP = 240;

const GEOMETRY = { gap: 4, monthHeight: 64, dayHeight: 40 };
const rowHeightFor = (width: number) => (width < 600 ? 110 : 200);

export function Photos({ open }: { open?: string }) {
  const [pages, setPages] = useState<Page[]>([]);
  // undefined until the first page is in; null after the last.
  const [next, setNext] = useState<string | null>();
  const [total, setTotal] = useState<number>();
  const [error, setError] = useState<string>();
  const loading = useRef(false);
  const grid = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const [range, setRange] = useState({ from: 0, to: 0 });

  const photos = useMemo(() => pages.flatMap((page) => page.photos), [pages]);
  const pageOf = useMemo(() => pages.flatMap((page, n) => page.photos.map(() => n)), [pages]);
  const timeline = useMemo(() => layoutTimeline(photos, { ...GEOMETRY, width, rowHeight: rowHeightFor(width) }), [photos, width]);

  const more = async () => {
    if (loading.current || next === null) return;
    loading.current = true;
    try {
      const page = await readPhotos(next);
      if (page.total !== undefined) setTotal(page.total);
      setPages((before) => [...before, { cursor: next, photos: page.photos, readAt: Date.now() }]);
      setNext(page.next);
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    } finally {
      loading.current = false;
    }
  };
  /** Reads a page again from its cursor: fresh addresses for pictures whose old ones expired. */
  const refresh = async (n: number) => {
    const page = pages[n];
    if (!page || Date.now() - page.readAt < 5000) return;
    page.readAt = Date.now();
    try {
      const fresh = await readPhotos(page.cursor);
      setPages((before) => before.map((old, i) => (i === n ? { ...old, photos: fresh.photos, readAt: Date.now() } : old)));
    } catch {
      // The picture stays blank; the next scroll past it tries again.
    }
  };

  useEffect(() => void more(), []);

  // The column's width decides the layout; the window's scroll, what is drawn.
  useEffect(() => {
    const element = grid.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry?.contentRect.width ?? 0)));
    observer.observe(element);
    let frame = 0;
    const measure = () => {
      frame = 0;
      const top = element.getBoundingClientRect().top;
      const from = Math.max(0, Math.floor((-top - innerHeight * AHEAD) / STEP) * STEP);
      const to = Math.ceil((-top + innerHeight * (1 + AHEAD)) / STEP) * STEP;
      setRange((before) => (before.from === from && before.to === to ? before : { from, to }));
    };
    const scheduled = () => (frame ||= requestAnimationFrame(measure));
    measure();
    addEventListener('scroll', scheduled, { passive: true });
    addEventListener('resize', scheduled);
    return () => {
      observer.disconnect();
      removeEventListener('scroll', scheduled);
      removeEventListener('resize', scheduled);
      cancelAnimationFrame(frame);
    };
  }, [next === undefined]);

  // Near the end of what is laid out: the next page.
  useEffect(() => {
    if (next && width > 0 && range.to >= timeline.height - innerHeight) void more();
  }, [range, timeline.height, next]);

  const shown = blocksBetween(timeline.blocks, range.from, range.to);
  // Pages whose addresses have expired are read again as they come into view.
  useEffect(() => {
    const stale = new Set<number>();
    for (const block of shown) {
      if (block.kind !== 'row') continue;
      for (const tile of block.tiles) {
        const n = pageOf[tile.index] as number;
        if (Date.now() - (pages[n]?.readAt ?? 0) > FRESH_MS) stale.add(n);
      }
    }
    stale.forEach((n) => void refresh(n));
  }, [range]);

  const index = open ? photos.findIndex((photo) => photo.fileId === open) : -1;
  // The viewer nears the last picture read: read on.
  useEffect(() => {
    if (index >= 0 && index > photos.length - 5 && next) void more();
  }, [index]);
  const close = () => {
    // Back to the grid, with the picture last shown in view.
    const row = timeline.blocks.find((block) => block.kind === 'row' && block.tiles.some((tile) => tile.index === index));
    location.replace(href('photos'));
    const top = grid.current?.getBoundingClientRect().top;
    if (row && top !== undefined && (row.top + top < 0 || row.top + top > innerHeight - row.height))
      scrollTo(0, scrollY + top + row.top - 80);
  };

  return (
    <section aria-labelledby="photos-title" class="photos">
      <div class="screen-head">
        <ScreenTitle id="photos-title">Photos</ScreenTitle>
        {total !== undefined && total > 0 ? <p class="summary">{countWords(total, 'photo')}</p> : null}
      </div>
      <Status error={error} message={next === undefined && !error ? 'Loading…' : undefined} />
      {total === 0 ? (
        <p class="empty">
          No photos yet. Pictures you upload to <a href={href('files')}>Files</a> appear here, by the day they were taken.
        </p>
      ) : null}
      <div class="photo-grid" ref={grid} style={{ height: `${timeline.height}px` }}>
        {shown.map((block) => (
          <TimelineBlock key={block.key} block={block} photos={photos} onExpired={(i) => void refresh(pageOf[i] as number)} />
        ))}
      </div>
      {index >= 0 ? (
        <Viewer
          photo={photos[index] as Photo}
          previous={photos[index - 1]}
          next={photos[index + 1]}
          onClose={close}
          onMove={(photo) => location.replace(href('photos', photo.fileId))}
        />
      ) : null}
    </section>
  );
}

/** A heading or a row of the grid, at its place. */
function TimelineBlock({ block, photos, onExpired }: { block: Block; photos: Photo[]; onExpired: (index: number) => void }) {
  const place = { top: `${block.top}px`, height: `${block.height}px` };
  if (block.kind === 'month')
    return (
      <h2 class="photo-month" style={place}>
        {block.label}
      </h2>
    );
  if (block.kind === 'day')
    return (
      <h3 class="photo-day" style={place}>
        {block.label}
      </h3>
    );
  return (
    <div class="photo-row" style={place}>
      {block.tiles.map((tile) => {
        const photo = photos[tile.index] as Photo;
        return (
          <a
            key={photo.fileId}
            class="photo-tile"
            href={href('photos', photo.fileId)}
            style={{ left: `${tile.left}px`, width: `${tile.width}px` }}
          >
            <img src={photo.thumbnailUrl} alt={photo.name} decoding="async" onError={() => onExpired(tile.index)} />
          </a>
        );
      })}
    </div>
  );
}
