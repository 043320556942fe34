// Attempts per key (client address, or instance and client) in a fixed window, counted in Redis so a
// limit holds across every process of the cluster. Used for login, sign-up and dex's registerHat.
import type { Cluster, Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from './errors';

export class RateLimit {
  private readonly limiter: RateLimiterRedis;

  private readonly whenUnavailable: 'refuse' | 'allow';

  constructor(
    redis: Redis | Cluster,
    options: {
      points: number;
      durationSeconds: number;
      keyPrefix: string;
      /** Without Redis: refuse (503, for brute-force guards) or let the call through (when it needs no Redis). */
      whenUnavailable?: 'refuse' | 'allow';
    },
  ) {
    this.whenUnavailable = options.whenUnavailable ?? 'refuse';
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: options.keyPrefix,
      points: options.points,
      duration: options.durationSeconds,
    });
  }

  /** Counts one attempt; 429 with Retry-After past the limit. When Redis cannot count: 503, or nothing if allowed. */
  async consume(key: string): Promise<void> {
    try {
      await this.limiter.consume(key);
    } catch (result) {
      if (result instanceof RateLimiterRes) throw ApiError.tooManyRequests(result.msBeforeNext / 1000);
      if (this.whenUnavailable === 'refuse') throw ApiError.unavailable();
    }
  }

  /** Gives back the attempt `consume` counted, for a call refused before it cost anything. Best effort. */
  async refund(key: string): Promise<void> {
    await this.limiter.reward(key, 1).catch(() => undefined);
  }
}
