// A picture of the timeline over the whole screen: the picture itself (its thumbnail until it loads),
// previous and next by button, arrow keys or a swipe, Escape or Close to go back to the grid.
import { useEffect, useRef, useState } from 'preact/hooks';
import { kindOf } from '../../files/kinds';
import { shownDate } from '../../photos/layout';
import type { Photo } from '../../photos/source';
import { href } from '../../router';

/** A swipe is a horizontal move of at least this many pixels, more sideways than up or down. */
const SWIPE = 50;

export function Viewer({
  photo,
  previous,
  next,
  onClose,
  onMove,
}: {
  photo: Photo;
  previous?: Photo;
  next?: Photo;
  onClose: () => void;
  onMove: (photo: Photo) => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const [loaded, setLoaded] = useState(false);
  const start = useRef<{ x: number; y: number } | undefined>(undefined);
  useEffect(() => ref.current?.focus(), []);
  useEffect(() => setLoaded(false), [photo.fileId]);
  // The neighbours' pictures start loading now, so moving on shows them at once.
  useEffect(() => {
    for (const near of [previous, next]) if (near && kindOf(near.name) === 'image') new Image().src = near.contentUrl;
  }, [photo.fileId]);

  const key = (event: KeyboardEvent) => {
    if (event.key === 'Escape') onClose();
    else if (event.key === 'ArrowLeft' && previous) onMove(previous);
    else if (event.key === 'ArrowRight' && next) onMove(next);
    else return;
    event.preventDefault();
  };
  const date = shownDate(photo);
  const video = kindOf(photo.name) === 'video';
  return (
    <div
      class="viewer"
      role="dialog"
      aria-modal="true"
      aria-label={`${photo.name}, ${date.toLocaleString()}`}
      tabIndex={-1}
      ref={ref}
      onKeyDown={key}
      onPointerDown={(e) => (start.current = { x: e.clientX, y: e.clientY })}
      onPointerCancel={() => (start.current = undefined)}
      // A picture held and moved is a swipe, not a drag of the image out of the page.
      onDragStart={(e) => e.preventDefault()}
      onPointerUp={(e) => {
        const from = start.current;
        start.current = undefined;
        if (!from) return;
        const [dx, dy] = [e.clientX - from.x, e.clientY - from.y];
        if (Math.abs(dx) < SWIPE || Math.abs(dx) < Math.abs(dy)) return;
        const to = dx < 0 ? next : previous;
        if (to) onMove(to);
      }}
    >
      <div class="viewer-bar">
        <div class="viewer-caption">
          <strong>{photo.name}</strong>
          <span>{date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}</span>
        </div>
        <a class="button secondary small" href={href('files', photo.fileId)}>
          Details
        </a>
        <button type="button" class="secondary small" onClick={onClose}>
          Close
        </button>
      </div>
      <div class="viewer-stage">
        {video ? (
          <video class="viewer-picture" src={photo.contentUrl} poster={photo.thumbnailUrl} controls aria-label={photo.name} />
        ) : (
          <>
            {loaded ? null : <img class="viewer-picture viewer-placeholder" src={photo.thumbnailUrl} alt="" />}
            <img
              key={photo.fileId}
              class={loaded ? 'viewer-picture' : 'viewer-picture loading'}
              src={photo.contentUrl}
              alt={photo.name}
              onLoad={() => setLoaded(true)}
            />
          </>
        )}
      </div>
      {previous ? (
        <button type="button" class="viewer-move previous" aria-label="Previous photo" onClick={() => onMove(previous)}>
          ‹
        </button>
      ) : null}
      {next ? (
        <button type="button" class="viewer-move next" aria-label="Next photo" onClick={() => onMove(next)}>
          ›
        </button>
      ) : null}
    </div>
  );
}
