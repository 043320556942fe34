// Pictures drawn in SVG (nothing fetched, nothing inline-styled: colours come from style.css by class).
import type { FileKind } from './files/kinds';

/** What each kind shows on its page: a few strokes on a 24×24 grid. */
const MARKS: Record<FileKind, preact.JSX.Element | null> = {
  image: (
    <>
      <circle cx="9.5" cy="11" r="1.5" />
      <path d="M7 18l3.5-4 2.5 2.5 2-2 2 3.5z" />
    </>
  ),
  pdf: <path d="M8 16.5v-4h1.5a1.2 1.2 0 010 2.5H8m4.5 1.5v-4H14a2 2 0 010 4zm5-4h-2v4m0-2h1.6" />,
  document: <path d="M8 11h8M8 14h8M8 17h5" />,
  text: <path d="M8 12h8M8 15h6" />,
  audio: <path d="M11 17.5V11l5-1.2v6M11 17.5a1.5 1.5 0 11-1.5-1.5M16 15.8a1.5 1.5 0 11-1.5-1.5" />,
  video: <path d="M10 11v6l5-3z" />,
  archive: <path d="M12 4v2m0 2v2m0 2v2m-1.5 0h3v4h-3z" />,
  other: null,
};

/** A page with a folded corner, marked by the file's kind. */
export function FileIcon({ kind }: { kind: FileKind }) {
  return (
    <svg class={`file-icon kind-${kind}`} viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path class="page" d="M6 2.5h8l4.5 4.5v14.5H6z" />
      <path class="fold" d="M14 2.5V7h4.5" />
      <g class="mark">{MARKS[kind]}</g>
    </svg>
  );
}

/** The brand: the favicon's drawing (icon.svg), coloured by the theme. */
export function BrandMark() {
  return (
    <svg class="brand-mark" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <rect class="ground" width="32" height="32" rx="6" />
      <path class="letter" d="M9 8h9a6 6 0 0 1 0 12h-5v5H9z" />
      <circle class="ground" cx="17.5" cy="14" r="2.5" />
    </svg>
  );
}
