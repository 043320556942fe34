// Login attempts per client and instance, counted in Redis so the limit holds across gateways.
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '@pds/http';

export class LoginLimiter {
  private readonly limiter: RateLimiterRedis;

  constructor(redis: Redis, options: { points: number; durationSeconds: number; keyPrefix?: string }) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: options.keyPrefix ?? 'pds:login',
      points: options.points,
      duration: options.durationSeconds,
    });
  }

  /** Counts one attempt; 429 with Retry-After past the limit, 503 when Redis cannot count (fail closed). */
  async consume(instanceId: string, client: string): Promise<void> {
    try {
      await this.limiter.consume(`${instanceId}:${client}`);
    } catch (result) {
      if (result instanceof RateLimiterRes) throw ApiError.tooManyRequests(result.msBeforeNext / 1000);
      throw ApiError.unavailable();
    }
  }
}
