// Redis connections by the way they may wait. A request path must answer within a second while Redis
// is down (503, never a hang); a BullMQ worker or event listener blocks by design and must retry forever.
import { Redis, type RedisOptions } from 'ioredis';

/** Longest a request waits on one Redis command before the call answers 503. */
export const REQUEST_COMMAND_TIMEOUT_MS = 500;

/**
 * For request paths (rate limits, enqueueing): commands fail at once while disconnected instead of
 * queueing, and a command that gets no answer fails after REQUEST_COMMAND_TIMEOUT_MS. The connection
 * itself keeps reconnecting in the background, so calls succeed again as soon as Redis is back.
 */
export function requestRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: REQUEST_COMMAND_TIMEOUT_MS,
    connectTimeout: 1000,
    maxRetriesPerRequest: 1,
    // Reconnect quickly after an outage: recovery should not wait for a long backoff.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
    ...options,
  });
}

/** For BullMQ workers and QueueEvents, which block on Redis: commands wait for the connection. */
export function blockingRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, retryStrategy: (attempt) => Math.min(attempt * 100, 1000), ...options });
}
