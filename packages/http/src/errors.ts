// One error catalogue, thrown from anywhere and rendered in one place (see middleware.ts).

export type ErrorKind =
  | 'Bad Request'
  | 'Not Authenticated'
  | 'Forbidden'
  | 'Not Found'
  | 'Conflict'
  | 'Gone'
  | 'Precondition Failed'
  | 'Request Timeout'
  | 'Payload Too Large'
  | 'Unsupported Media Type'
  | 'Locked'
  | 'Checksum Mismatch'
  | 'Too Many Requests'
  | 'Internal Server Error'
  | 'Not Implemented'
  | 'Service Unavailable';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly kind: ErrorKind,
    message: string,
    /** Extra fields for the body (e.g. `cause`), and headers such as Retry-After. */
    readonly extra: { body?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }

  static badRequest(message: string) {
    return new ApiError(400, 'Bad Request', message);
  }
  static notAuthenticated(message = 'Not Authenticated', body?: Record<string, unknown>) {
    return new ApiError(401, 'Not Authenticated', message, { body });
  }
  static forbidden(message = 'Access Denied') {
    return new ApiError(403, 'Forbidden', message);
  }
  static notFound(message: string) {
    return new ApiError(404, 'Not Found', message);
  }
  static conflict(message: string) {
    return new ApiError(409, 'Conflict', message);
  }
  /** An instance its owner is closing: only the calls of the closing flow still answer. */
  static gone(message: string) {
    return new ApiError(410, 'Gone', message);
  }
  static tooLarge(message: string) {
    return new ApiError(413, 'Payload Too Large', message);
  }
  /** An instance the operator suspended. */
  static locked(message: string) {
    return new ApiError(423, 'Locked', message);
  }
  static tooManyRequests(retryAfterSeconds: number) {
    const seconds = String(Math.max(1, Math.ceil(retryAfterSeconds)));
    return new ApiError(429, 'Too Many Requests', `Too many requests; retry after ${seconds} s`, {
      headers: { 'Retry-After': seconds },
    });
  }
  /** A call that is declared but whose feature has not landed yet. */
  static notImplemented(message: string) {
    return new ApiError(501, 'Not Implemented', message);
  }
  static unavailable(message = 'A service this call needs is unreachable; try again shortly') {
    return new ApiError(503, 'Service Unavailable', message, { headers: { 'Retry-After': '5' } });
  }
}
