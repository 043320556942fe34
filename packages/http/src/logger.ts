import pino, { type Logger } from 'pino';

export type { Logger };

/** Paths never written to logs: credentials travel in these headers and fields. */
const REDACT = [
  'req.headers["x-auth-token"]',
  'req.headers.password',
  'req.headers.pass',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["x-auth-token"]',
  'password',
  'pass',
  'token',
  'accessToken',
];

export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: options.name,
    level: options.level ?? 'info',
    redact: { paths: REDACT, censor: '***' },
    base: undefined,
  });
}
