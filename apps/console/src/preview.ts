// Previews are made from the fetched bytes (a blob: address), so the CSP needs no frame or image
// source beyond the instance and its store.
import { extensionOf, kindOf } from './files/kinds';

export type PreviewKind = 'image' | 'text' | 'pdf';

/** The images every browser draws (not HEIC or TIFF). */
const DRAWN = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'svg']);

export function previewKind(name: string): PreviewKind | undefined {
  const kind = kindOf(name);
  if (kind === 'image') return DRAWN.has(extensionOf(name)) ? 'image' : undefined;
  return kind === 'text' || kind === 'pdf' ? kind : undefined;
}

const MIME: Record<PreviewKind, (name: string) => string> = {
  image: (name) =>
    /\.svg$/i.test(name) ? 'image/svg+xml' : `image/${(name.split('.').pop() ?? 'png').toLowerCase().replace('jpg', 'jpeg')}`,
  text: () => 'text/plain',
  pdf: () => 'application/pdf',
};

/** Text previews are cut at this many bytes so a huge log does not freeze the page. */
const TEXT_LIMIT = 256 * 1024;

export async function loadPreview(url: string, name: string, kind: PreviewKind): Promise<{ url?: string; text?: string }> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`The content could not be read (${response.status})`);
  const bytes = await response.arrayBuffer();
  if (kind === 'text') return { text: new TextDecoder().decode(bytes.slice(0, TEXT_LIMIT)) };
  return { url: URL.createObjectURL(new Blob([bytes], { type: MIME[kind](name) })) };
}
