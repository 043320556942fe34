// Calls to this instance's API (same origin). Every answer may carry a refreshed token in
// X-Auth-Token; a 401 ends the session.
import { currentSession, endSession, keepName, keepToken } from './session';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds to wait before trying again (Retry-After of a 429 or 503). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** Retry-After in seconds: a number of seconds, or an HTTP date. */
function retryAfterOf(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = /^\d+$/.test(header) ? Number(header) : (Date.parse(header) - Date.now()) / 1000;
  return Number.isFinite(seconds) ? Math.max(0, Math.ceil(seconds)) : undefined;
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send no session token (sign-up, public content). */
  anonymous?: boolean;
}

export async function call<T>(path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  const session = options.anonymous ? undefined : currentSession();
  if (session) headers['X-Auth-Token'] = session.token;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const refreshed = response.headers.get('X-Auth-Token');
  if (refreshed && session) keepToken(refreshed);
  const text = await response.text();
  const body: unknown = text ? safeJson(text) : undefined;
  if (!response.ok) {
    if (response.status === 401 && session) endSession('ended');
    const message = (body as { message?: string } | undefined)?.message ?? `${response.status} ${response.statusText}`;
    throw new ApiFailure(response.status, message, retryAfterOf(response.headers.get('Retry-After')));
  }
  return body as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Logs in with username and password (headers, URL-encoded as the original's clients send them), and the
 * second-factor code when the account has one (a 401 whose message asks for it says so).
 */
export async function logIn(username: string, password: string, totp?: string): Promise<void> {
  const { accessToken } = await call<{ accessToken: string }>('/users/access_token', {
    anonymous: true,
    headers: { username: encodeURIComponent(username), password: encodeURIComponent(password), ...(totp ? { 'X-Totp': totp } : {}) },
  });
  keepToken(accessToken);
  keepName(username);
}

/** "in 1 minute", "in 45 seconds": how long to wait, as a person says it. */
export function waitWords(seconds: number | undefined): string {
  if (seconds === undefined || seconds <= 1) return 'in a moment';
  if (seconds < 60) return `in ${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? 'in 1 minute' : `in ${minutes} minutes`;
}

/** The API's field names as a person calls them ("pass: must be …" → "The password must be …"). */
const FIELD_WORDS: Record<string, string> = {
  pass: 'The password',
  password: 'The password',
  newPassword: 'The new password',
  passRepeat: 'The repeated password',
  username: 'The username',
  email: 'The e-mail address',
  fullName: 'The full name',
  name: 'The name',
  tags: 'The tags',
  code: 'The code',
};

/**
 * A validation message in people's words: each "field: problem" of it starts with the field's name
 * as people say it, never the API's ("password: must be 8 to 256 characters" → "The password must be
 * 8 to 256 characters.").
 */
export function plainMessage(message: string): string {
  return message
    .split('; ')
    .map((part) => {
      // "field: problem", or "newPassword must …" (a known field name, then its rule).
      const [, field, problem] = /^([A-Za-z][\w.]*): (.*)$/s.exec(part) ?? /^([A-Za-z]+) (must .*)$/s.exec(part) ?? [];
      if (!field || !problem || (!part.includes(': ') && !FIELD_WORDS[field])) return part;
      const words = FIELD_WORDS[field] ?? `The ${field.replace(/[A-Z.]/g, (c) => (c === '.' ? ' ' : ` ${c.toLowerCase()}`))}`;
      return `${words} ${problem.replace(/\.$/, '')}.`;
    })
    .join(' ');
}

/**
 * What went wrong, in words for the person in front of the screen. The server's own messages for
 * 400, 404 and 409 name the field or file and stay; the rest would read as jargon.
 */
export function errorText(error: unknown): string {
  if (error instanceof ApiFailure) {
    if (error.status === 401) return 'Your session has ended. Log in again.';
    if (error.status === 403) return 'You are not allowed to do that.';
    if (error.status === 413) return 'That is too large for this data store.';
    if (error.status === 429) return `Too many attempts. Try again ${waitWords(error.retryAfter)}.`;
    if (error.status >= 500) return 'Something went wrong on the server. Try again in a moment.';
    return error.status === 400 ? plainMessage(error.message) : error.message;
  }
  // fetch rejects with a TypeError when the network, not the server, failed.
  if (error instanceof TypeError) return 'The data store could not be reached. Check your connection and try again.';
  return error instanceof Error ? error.message : String(error);
}
