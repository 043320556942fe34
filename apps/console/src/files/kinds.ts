// What kind of file a name suggests (the API stores no media type): for icons, the type filter and
// previews. Decided by the last extension, case-insensitively. The gateway's listing filters by the
// same table (`@pds/console/kinds`), so a kind means the same on both sides.
export const FILE_KINDS = ['image', 'pdf', 'document', 'text', 'audio', 'video', 'archive', 'other'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

/** The extensions (lower case, no dot) of each kind; `other` is every name none of these ends with. */
export const EXTENSIONS: Record<Exclude<FileKind, 'other'>, string[]> = {
  image: ['png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'svg', 'heic', 'tif', 'tiff'],
  pdf: ['pdf'],
  document: ['doc', 'docx', 'odt', 'rtf', 'xls', 'xlsx', 'ods', 'ppt', 'pptx', 'odp', 'pages', 'numbers', 'key', 'epub'],
  text: ['txt', 'md', 'csv', 'json', 'log', 'xml', 'yaml', 'yml', 'ts', 'js', 'html', 'htm', 'css'],
  audio: ['mp3', 'wav', 'ogg', 'oga', 'flac', 'm4a', 'aac', 'opus'],
  video: ['mp4', 'mov', 'webm', 'mkv', 'avi', 'm4v', 'ogv'],
  archive: ['zip', 'tar', 'gz', 'tgz', 'bz2', 'xz', '7z', 'rar'],
};

const BY_EXTENSION = new Map(Object.entries(EXTENSIONS).flatMap(([kind, list]) => list.map((ext) => [ext, kind as FileKind])));

export const extensionOf = (name: string): string => (/\.([^.]+)$/.exec(name)?.[1] ?? '').toLowerCase();

export const kindOf = (name: string): FileKind => BY_EXTENSION.get(extensionOf(name)) ?? 'other';

/** The kinds in the order the type filter offers them, with their names in the plural. */
export const KIND_LABELS: [FileKind, string][] = [
  ['image', 'Images'],
  ['pdf', 'PDFs'],
  ['document', 'Documents'],
  ['text', 'Text'],
  ['audio', 'Audio'],
  ['video', 'Videos'],
  ['archive', 'Archives'],
  ['other', 'Other'],
];
