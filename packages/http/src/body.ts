// JSON request bodies, parsed so that no byte sequence can cost a 500 or unbounded memory:
// - Content-Encoding gzip/deflate/br is inflated with the output bounded by the same limit as raw
//   bodies (a zip bomb stops at the limit); corrupt or truncated data is a 400, an unknown coding a 415;
// - the text must be UTF-8 and its nesting depth is counted in one pass over the text BEFORE
//   JSON.parse, so a body nested 100,000 levels deep is refused without building (or recursing over) it;
// - every string and key must be storable in PostgreSQL (no NUL, no lone surrogates; see strings.ts).
import type { IncomingMessage } from 'node:http';
import zlib from 'node:zlib';
import { ApiError } from './errors';
import { assertStorableDeep, unstorableReason } from './strings';

export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;
/**
 * How long a bounded body (JSON, a form) may take to arrive whole. The gateway's listener has no limit
 * on a whole request (an upload may take hours), so the bodies that are small have their own.
 */
export const BODY_DEADLINE_MS = 60_000;
/** An upload whose client sends nothing for this long is taken as cut (arrivingBytes). */
export const UPLOAD_IDLE_MS = 30_000;
/** Deeper than any document the API stores (data records allow 32 levels). */
export const MAX_JSON_DEPTH = 64;

/** Reads and parses a JSON body (the caller has checked its media type); every refusal is a 4xx. */
export async function readBody(req: IncomingMessage, limitBytes = JSON_BODY_LIMIT_BYTES): Promise<unknown> {
  return parseJson(await readText(req, limitBytes));
}

/**
 * Reads a body as UTF-8 text, inflated per Content-Encoding and bounded by `limitBytes` and by
 * `deadlineMs` (408 when it has not all come by then); every refusal is a 4xx.
 */
export async function readText(req: IncomingMessage, limitBytes: number, deadlineMs = BODY_DEADLINE_MS): Promise<string> {
  const charset = /;\s*charset=("?)([^";]+)\1/i.exec(req.headers['content-type'] ?? '')?.[2]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') throw unsupported(`Unsupported charset ${charset.slice(0, 40)}; send UTF-8`);
  const declared = Number(req.headers['content-length']);
  if (declared > limitBytes) throw tooLarge(limitBytes);
  const encoding = req.headers['content-encoding'];
  return decodeUtf8(await readDecoded(req, encoding, limitBytes, deadlineMs));
}

/**
 * A long body's bytes as they come (an upload), with no deadline for the whole: the request is
 * destroyed (and the iteration throws) once the client has sent nothing for `idleMs` while its bytes
 * were awaited. The time the consumer takes with a piece is not the client's silence.
 */
export async function* arrivingBytes(req: IncomingMessage, idleMs: number): AsyncGenerator<Buffer> {
  const chunks = req.iterator({ destroyOnReturn: false });
  let idle: NodeJS.Timeout | undefined;
  try {
    for (;;) {
      idle = setTimeout(() => req.destroy(new Error('no bytes for too long')), idleMs);
      const next = (await chunks.next()) as IteratorResult<Buffer>;
      clearTimeout(idle);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    clearTimeout(idle);
  }
}

/** Parses JSON text whose nesting is first checked against MAX_JSON_DEPTH; 400 on any failure. */
export function parseJson(text: string, what = 'body'): unknown {
  // As express.json did: clients send a JSON type with an empty body on calls that take none.
  if (text.trim() === '') return {};
  if (nestingDepth(text) > MAX_JSON_DEPTH) throw ApiError.badRequest(`${what}: nests deeper than ${MAX_JSON_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw ApiError.badRequest('Body is not valid JSON');
  }
  if (mayHoldUnstorable(text)) assertStorableDeep(value, what);
  return value;
}

/** A `\u` escape of NUL or of a surrogate half. */
const ESCAPED_UNSTORABLE = /\\u(?:0000|[dD][89abcdefABCDEF])/;

/**
 * Whether any string parsed from `text` could be one PostgreSQL cannot store. Every character of a
 * parsed string is a raw character of the text or an escape in it, so a text with neither kind needs
 * no walk over what it parsed into: the walk visits every value of every body, the scan is one regex pass.
 */
function mayHoldUnstorable(text: string): boolean {
  return ESCAPED_UNSTORABLE.test(text) || unstorableReason(text) !== null;
}

/**
 * The deepest bracket nesting in JSON text, ignoring brackets inside strings. One pass, no recursion;
 * a string is skipped with indexOf to its closing quote (most of a body's characters are in strings,
 * and a character-by-character loop over them cost three times as much).
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuote(text, i);
      if (i < 0) break;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest) deepest = depth;
      if (deepest > MAX_JSON_DEPTH) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** The index of the quote that closes the string opened at `open`: the next one not escaped by an odd run of backslashes (-1: none). */
function closingQuote(text: string, open: number): number {
  let quote = text.indexOf('"', open + 1);
  while (quote > 0) {
    let before = quote - 1;
    while (text.charCodeAt(before) === 0x5c) before--;
    if ((quote - before) % 2 === 1) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  return -1;
}

/** One for the process: without `stream`, each decode starts afresh. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw ApiError.badRequest('Body is not valid UTF-8');
  }
}

/** Reads the body, inflating it per Content-Encoding, and stops as soon as the result passes `limit`. */
function readDecoded(req: IncomingMessage, encoding: string | undefined, limit: number, deadlineMs: number): Promise<Buffer> {
  const codings = (encoding ?? 'identity')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length > 1) throw unsupported('Only one Content-Encoding at a time is supported');
  const coding = codings[0];
  const inflater = coding === undefined ? undefined : decompressor(coding);
  const source: NodeJS.ReadableStream = inflater ? req.pipe(inflater) : req;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    // The rest of a late body is never read: its answer closes the connection.
    const late = setTimeout(
      () =>
        fail(
          new ApiError(408, 'Request Timeout', `The body did not arrive within ${deadlineMs / 1000} s`, {
            headers: { Connection: 'close' },
          }),
        ),
      deadlineMs,
    );
    const fail = (error: ApiError) => {
      clearTimeout(late);
      if (settled) return;
      settled = true;
      if (inflater) {
        req.unpipe(inflater);
        inflater.destroy();
      }
      reject(error);
    };
    source.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return fail(tooLarge(limit));
      chunks.push(chunk);
    });
    source.on('end', () => {
      clearTimeout(late);
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks));
    });
    source.on('error', () => fail(ApiError.badRequest(`Body is not valid ${coding ?? 'data'}: corrupt or truncated`)));
    // The client went away: nothing to answer, but the promise must not hang.
    req.on('aborted', () => fail(ApiError.badRequest('Body was not received completely')));
    if (inflater) req.on('error', () => fail(ApiError.badRequest('Body was not received completely')));
  });
}

function decompressor(coding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      throw unsupported(`Unsupported Content-Encoding ${coding.slice(0, 40)}; use gzip, deflate, br or none`);
  }
}

function tooLarge(limit: number): ApiError {
  return ApiError.tooLarge(`Body is larger than ${limit} bytes (after decompression)`);
}

function unsupported(message: string): ApiError {
  return new ApiError(415, 'Unsupported Media Type', message);
}
