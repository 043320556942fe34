// Calls to this instance's API (same origin). Every answer may carry a refreshed token in
// X-Auth-Token; a 401 ends the session.
import { currentSession, endSession, keepToken } from './session';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
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
    if (response.status === 401 && session) endSession();
    const message = (body as { message?: string } | undefined)?.message ?? `${response.status} ${response.statusText}`;
    throw new ApiFailure(response.status, message);
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

/** Logs in with username and password (headers, URL-encoded as the original's clients send them). */
export async function logIn(username: string, password: string): Promise<void> {
  const { accessToken } = await call<{ accessToken: string }>('/users/access_token', {
    anonymous: true,
    headers: { username: encodeURIComponent(username), password: encodeURIComponent(password) },
  });
  keepToken(accessToken);
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
