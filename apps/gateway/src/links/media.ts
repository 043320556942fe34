// What a shared file is, from its name (the API stores no media type): the type it is sent with, and
// how a link's page may show it. Only types a browser shows safely are shown inline: no SVG (it may carry
// scripts) and no HTML (a text file is sent as text/plain, whatever its extension).
import { extensionOf, kindOf } from '@pds/console/kinds';

export type PreviewKind = 'image' | 'pdf' | 'text' | 'video' | 'audio';

const TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
  pdf: 'application/pdf',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  ogv: 'video/ogg',
  mov: 'video/quicktime',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  zip: 'application/zip',
  json: 'application/json',
  csv: 'text/csv',
};

const OCTETS = 'application/octet-stream';
const TEXT = 'text/plain; charset=utf-8';

/** The media type a download is sent with: the name's, or bytes of no particular type. */
export function mediaTypeOf(name: string): string {
  return TYPES[extensionOf(name)] ?? (kindOf(name) === 'text' ? TEXT : OCTETS);
}

/** How a link's page shows the file inline, with the type the preview is sent as; undefined when it is not shown. */
export function previewOf(name: string): { kind: PreviewKind; type: string } | undefined {
  const kind = kindOf(name);
  if (kind === 'text') return { kind, type: TEXT };
  const type = TYPES[extensionOf(name)];
  if (!type) return undefined;
  if (kind === 'image' || kind === 'pdf' || kind === 'video' || kind === 'audio') return { kind, type };
  return undefined;
}

const WORDS: Record<ReturnType<typeof kindOf>, string> = {
  image: 'image',
  pdf: 'document',
  document: 'document',
  text: 'text',
  audio: 'audio',
  video: 'video',
  archive: 'archive',
  other: 'file',
};

/** "PDF document", "JPG image", "file": what a person calls the file's type. */
export function typeWords(name: string): string {
  const extension = extensionOf(name).toUpperCase();
  const words = WORDS[kindOf(name)];
  return extension && extension.length <= 5 ? `${extension} ${words}` : words;
}

/**
 * `Content-Disposition` for a file sent under its own name: an ASCII fallback in `filename` (quotes,
 * backslashes and anything outside printable ASCII made `_`) and the exact name in `filename*` (RFC 6266).
 */
export function disposition(kind: 'attachment' | 'inline', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${exact}`;
}
