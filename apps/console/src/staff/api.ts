// Calls from a staff console (the operator's, on the gateway's admin listener; dex administrators', on dex)
// to its own listener's API, same origin. The session is the HttpOnly cookie the log-in set, which the
// page never sees; a 401 from anything but the session itself means it ended.
export class StaffFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface StaffApi {
  call<T>(path: string, options?: { method?: string; body?: unknown }): Promise<T>;
  /** Called when a call finds the session over (the console shows its log-in). */
  onLoggedOut(listener: () => void): () => void;
  /** What went wrong, for the person: the API's own message (it names the instance, field or job). */
  failureText(error: unknown): string;
  /** Where the console logs in (POST), says who is in (GET) and logs out (DELETE). */
  sessionPath: string;
}

/** `unreachable`: what to say when the listener does not answer at all. */
export function staffApi(sessionPath: string, unreachable: string): StaffApi {
  const listeners = new Set<() => void>();
  return {
    sessionPath,
    onLoggedOut(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async call<T>(path: string, options: { method?: string; body?: unknown } = {}): Promise<T> {
      const response = await fetch(path, {
        method: options.method ?? 'GET',
        credentials: 'same-origin',
        headers: { Accept: 'application/json', ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      const text = await response.text();
      const body = text ? (JSON.parse(text) as unknown) : undefined;
      if (!response.ok) {
        if (response.status === 401 && path !== sessionPath) listeners.forEach((listener) => listener());
        throw new StaffFailure(
          response.status,
          (body as { message?: string } | undefined)?.message ?? `${response.status} ${response.statusText}`,
        );
      }
      return body as T;
    },
    failureText(error) {
      if (error instanceof StaffFailure)
        return error.status >= 500 ? 'Something went wrong on the server. Try again in a moment.' : error.message;
      if (error instanceof TypeError) return unreachable;
      return error instanceof Error ? error.message : String(error);
    },
  };
}

/** One entry of a console's audit (both consoles record the same fields). */
export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  action: string;
  target?: string;
  details?: Record<string, unknown>;
  client: string;
  status: number;
}
