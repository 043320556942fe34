// The fileId rule of CONTRACT §2: a slug of source + name that keeps the name's last extension.
import type { FileIdStem } from '@pds/db';

/** NFD, accents and every character outside [a-z0-9_] dropped, lower-case. */
export function slugify(text: string): string {
  return text
    .normalize('NFD')
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '');
}

/**
 * `test` + `testFile.png` → { base: 'testtestfile', ext: '.png' }. The repository appends `-N` to the
 * base when it is taken. A slug never contains `-` or `.`, so `<base>-<N><ext>` can never equal
 * another name's plain slug. An all-symbol source and name would give an empty id: `file` stands in.
 */
export function fileIdStem(source: string, name: string): FileIdStem {
  const dot = name.lastIndexOf('.');
  const extSlug = dot >= 0 ? slugify(name.slice(dot + 1)) : '';
  const ext = extSlug ? `.${extSlug}` : '';
  const stem = ext ? name.slice(0, dot) : name;
  return { base: slugify(source + stem) || 'file', ext };
}
