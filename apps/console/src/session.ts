// The login session: the token lives in sessionStorage (gone with the tab) and only as long as the
// token itself; each API answer's X-Auth-Token (the sliding session) replaces it.
const KEY = 'pds.session';

export interface Session {
  token: string;
  userId: string;
  scope: 'owner' | 'user' | 'application';
  /** Seconds since the epoch. */
  expires: number;
}

function claimsOf(token: string): { sub?: string; accessScope?: string; exp?: number; iss?: string } {
  try {
    const payload = token.split('.')[1] ?? '';
    return JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/')));
  } catch {
    return {};
  }
}

function fromToken(token: string): Session | undefined {
  const { sub, accessScope, exp } = claimsOf(token);
  if (!sub || !exp || !['owner', 'user', 'application'].includes(accessScope ?? '')) return undefined;
  return { token, userId: sub, scope: accessScope as Session['scope'], expires: exp };
}

const listeners = new Set<() => void>();

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function currentSession(): Session | undefined {
  const stored = sessionStorage.getItem(KEY);
  const session = stored ? fromToken(stored) : undefined;
  if (session && session.expires * 1000 > Date.now()) return session;
  if (stored) sessionStorage.removeItem(KEY);
  return undefined;
}

/** Keeps a token the server handed out (login or a refreshed one); ignores anything that is not one. */
export function keepToken(token: string): void {
  if (!fromToken(token) || sessionStorage.getItem(KEY) === token) return;
  sessionStorage.setItem(KEY, token);
  listeners.forEach((listener) => listener());
}

/** Why the last session ended, when the person did not end it: the login page says so. */
export type EndReason = 'ended';
const ENDED = 'pds.session-ended';
const NAME = 'pds.username';

/** The username the session was opened with (shown on the account menu), when this tab logged in. */
export const sessionName = (): string | undefined => sessionStorage.getItem(NAME) ?? undefined;
export const keepName = (username: string) => sessionStorage.setItem(NAME, username);

/** Whether the server ended the session (a 401: its password changed, "log out everywhere"); read once. */
export function takeEndReason(): EndReason | undefined {
  const reason = sessionStorage.getItem(ENDED);
  sessionStorage.removeItem(ENDED);
  return reason === 'ended' ? reason : undefined;
}

/** `reason`: the server ended it rather than the person; the login page then says why they are there. */
export function endSession(reason?: EndReason): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(NAME);
  if (reason) sessionStorage.setItem(ENDED, reason);
  listeners.forEach((listener) => listener());
}

/**
 * The sign-up page (another origin: the cluster domain) hands the new owner's token over in the
 * address's fragment, which browsers never send to a server. It is taken out of the address at once,
 * and kept only when this instance issued it.
 */
export function adoptHandedToken(): void {
  const handed = /^#session=([^&]+)$/.exec(location.hash)?.[1];
  if (!handed) return;
  history.replaceState(null, '', `${location.pathname}${location.search}#/files`);
  const token = decodeURIComponent(handed);
  if (claimsOf(token).iss === location.hostname) keepToken(token);
}

/** The address that opens this instance's console already logged in with `token`. */
export const handOverAddress = (instanceAddress: string, token: string) => `${instanceAddress}#session=${encodeURIComponent(token)}`;
