// The link's page (`/s/<token>`), rendered here: the person opening it has no account, often a phone, and
// opens it once, so it is one small HTML answer that works without a script, served even where the
// console is not built. Its Content-Security-Policy allows no script at all; its one style element is
// allowed by its hash. Previews are the browser's own: <img>, <video>, <audio>, and a frame for PDFs and
// text, each loading a short signed address through the link's preview route.
import { createHash } from 'node:crypto';
import { escapeHtml as escape, type ApiError } from '@pds/http';
import type { SharedFile } from '@pds/db';
import { previewOf, typeWords } from './media';
import type { OpenLink } from './visits';

const STYLE = `
:root{color-scheme:light dark;--bg:#f5f6f8;--surface:#fff;--ink:#1b1f24;--muted:#59636e;--line:#dfe3e8;--accent:#1a5fa6;--on-accent:#fff;--danger:#b42318;
font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;line-height:1.5;color:var(--ink);background:var(--bg)}
@media (prefers-color-scheme:dark){:root{--bg:#0f1216;--surface:#171b21;--ink:#e6e9ed;--muted:#a0aab5;--line:#2b323b;--accent:#78b0f5;--on-accent:#0c1522;--danger:#ff8b7e}}
*{box-sizing:border-box}body{margin:0}
main{max-width:44rem;margin:0 auto;padding:1.5rem 1rem 3rem}
.card{background:var(--surface);border:1px solid var(--line);border-radius:10px;padding:1.25rem}
h1{font-size:1.5rem;margin:0 0 .25rem;overflow-wrap:anywhere}
p{margin:.5rem 0}.muted{color:var(--muted);font-size:.875rem}.error{color:var(--danger);font-weight:600}
.button{display:inline-block;background:var(--accent);color:var(--on-accent);border:0;border-radius:6px;padding:.65rem 1.1rem;font:inherit;font-weight:600;text-decoration:none;cursor:pointer;min-height:2.75rem}
.preview{margin:1rem 0;border:1px solid var(--line);border-radius:6px;overflow:hidden;background:var(--bg)}
.preview img,.preview video{display:block;max-width:100%;max-height:70vh;margin:0 auto}.preview audio{display:block;width:100%}
.preview iframe{display:block;width:100%;height:70vh;border:0;background:#fff}
ul{list-style:none;margin:1rem 0;padding:0}li{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:baseline;padding:.6rem 0;border-top:1px solid var(--line)}
li .name{flex:1 1 12rem;font-weight:600;overflow-wrap:anywhere}li a{color:var(--accent);font-weight:600}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input{display:block;width:100%;font:inherit;padding:.6rem;border:1px solid var(--muted);border-radius:6px;background:var(--surface);color:var(--ink);margin-bottom:.75rem}
`;

/** A chain link, drawn inline: the page needs nothing but itself (no favicon request to answer 404). */
const ICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 24 24' fill='none' stroke='%231a5fa6' stroke-width='2.5' stroke-linecap='round'%3E%3Cpath d='M10 14a5 5 0 0 0 7 0l3-3a5 5 0 0 0-7-7l-1 1'/%3E%3Cpath d='M14 10a5 5 0 0 0-7 0l-3 3a5 5 0 0 0 7 7l1-1'/%3E%3C/svg%3E";

const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/**
 * No script, this page's own style, previews from the instance and its store, forms posted only back to
 * the instance, and no framing of the page itself.
 */
export function linkPageCsp(blobOrigin: string | undefined): string {
  const sources = `'self'${blobOrigin ? ` ${blobOrigin}` : ''}`;
  return [
    "default-src 'none'",
    `style-src ${STYLE_HASH}`,
    // data: for the page's own icon; nothing a visitor sends reaches the page unescaped.
    `img-src ${sources} data:`,
    `media-src ${sources}`,
    `frame-src ${sources}`,
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer"><link rel="icon" href="${ICON}">
<title>${escape(title)}</title><style>${STYLE}</style></head>
<body><main><div class="card">
${body}
</div></main></body></html>`;
}

export function bytesWords(size: number): string {
  if (size < 1024) return `${size} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = size / 1024;
  let unit = 0;
  for (; value >= 1024 && unit < units.length - 1; unit++) value /= 1024;
  return `${value.toFixed(1)} ${units[unit]}`;
}

const when = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' at ')} UTC`;

/** Where a link's address leads: `/s/<token>` and the routes under it. */
export interface LinkPaths {
  base: string;
  preview(fileId: string): string;
  download(fileId?: string): string;
}

/** The link's page: one file with its preview, or the list of a selection, with its downloads when allowed. */
export function linkPage(link: OpenLink, paths: LinkPaths): string {
  const terms = [
    link.expiresAt ? `Open until ${when(link.expiresAt)}.` : '',
    link.downloadsLeft === null || !link.allowDownload ? '' : `${link.downloadsLeft} download${link.downloadsLeft === 1 ? '' : 's'} left.`,
    link.allowDownload ? '' : 'The person who shared this lets you view it, not download it.',
  ].filter(Boolean);
  const footer = terms.length ? `<p class="muted">${escape(terms.join(' '))}</p>` : '';
  if (link.files.length === 1) return oneFile(link.files[0] as SharedFile, link.allowDownload, paths, footer);
  const total = link.files.reduce((sum, file) => sum + file.size, 0);
  const items = link.files
    .map((file) => {
      const open = previewOf(file.name) ? `<a href="${escape(paths.preview(file.fileId))}">Open</a>` : '';
      const save = link.allowDownload ? `<a href="${escape(paths.download(file.fileId))}">Download</a>` : '';
      return `<li><span class="name">${escape(file.name)}</span><span class="muted">${escape(facts(file))}</span>${open}${save}</li>`;
    })
    .join('\n');
  const zip = link.allowDownload ? `<p><a class="button" href="${escape(paths.download())}">Download all as a zip</a></p>` : '';
  return page(
    `${link.files.length} shared files`,
    `<p class="muted">Shared with you</p>
<h1>${link.files.length} files</h1>
<p class="muted">${escape(bytesWords(total))} in all</p>
${zip}
<ul>
${items}
</ul>
${footer}`,
  );
}

function oneFile(file: SharedFile, allowDownload: boolean, paths: LinkPaths, footer: string): string {
  const save = allowDownload ? `<p><a class="button" href="${escape(paths.download())}">Download</a></p>` : '';
  return page(
    file.name,
    `<p class="muted">Shared with you</p>
<h1>${escape(file.name)}</h1>
<p class="muted">${escape(facts(file))}</p>
${previewElement(file, paths)}
${save}
${footer}`,
  );
}

const facts = (file: SharedFile) => `${typeWords(file.name)} · ${bytesWords(file.size)}`;

function previewElement(file: SharedFile, paths: LinkPaths): string {
  const preview = previewOf(file.name);
  if (!preview) return '<p class="muted">No preview for this kind of file.</p>';
  const src = escape(paths.preview(file.fileId));
  const label = escape(`Preview of ${file.name}`);
  const element = {
    image: `<img src="${src}" alt="${label}">`,
    video: `<video controls preload="metadata" src="${src}" aria-label="${label}"></video>`,
    audio: `<audio controls preload="metadata" src="${src}" aria-label="${label}"></audio>`,
    // A PDF needs the browser's viewer, which a sandboxed frame does not get; text needs nothing.
    pdf: `<iframe src="${src}" title="${label}"></iframe>`,
    text: `<iframe src="${src}" title="${label}" sandbox></iframe>`,
  }[preview.kind];
  return `<div class="preview">${element}</div>`;
}

/** The password form; `problem` says what went wrong with the last try. */
export function passwordPage(paths: LinkPaths, problem?: string): string {
  const said = problem ? `<p class="error" role="alert">${escape(problem)}</p>` : '';
  return page(
    'Password needed',
    `<h1>This link needs a password</h1>
<p>The person who shared it will have told you the password.</p>
${said}
<form method="post" action="${escape(paths.base)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button class="button" type="submit">Open</button>
</form>`,
  );
}

const HEADINGS: Record<number, string> = {
  403: 'Not for download',
  404: 'Not available',
  410: 'No longer available',
  423: 'Not available for now',
  429: 'Too many tries',
};

/** Why the link opens nothing, as a page; the message says it plainly. */
export function refusalPage(refusal: ApiError): string {
  const heading = HEADINGS[refusal.status] ?? 'Something went wrong';
  return page(heading, `<h1>${escape(heading)}</h1>\n<p>${escape(refusal.message)}</p>`);
}
