// Attempts per key (client address, or instance and client) in a fixed window, counted in Redis so a
// limit holds across every process of the cluster: log-in, reset requests and links, sign-up, share-link
// passwords, dex's registerHat. AccountLimit adds a count per account over every address.
import { isIP } from 'node:net';
import type { Cluster, Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from './errors';

/**
 * The address a per-address limit counts: an IPv4 address itself, an IPv6 address by its /64 (one
 * subscriber's network: its 2^64 addresses cost an attacker nothing to rotate through).
 */
export function limitedAddress(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  let canonical: string;
  try {
    canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip;
  }
  const [head = '', tail] = canonical.split('::');
  const groups = head ? head.split(':') : [];
  if (tail !== undefined) {
    const rest = tail ? tail.split(':') : [];
    groups.push(...Array<string>(8 - groups.length - rest.length).fill('0'), ...rest);
  }
  return `${groups.slice(0, 4).join(':')}::/64`;
}

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

/**
 * Failures per account, from every address together: a guessing spread over many addresses, which no
 * per-address limit sees, still slows down. Past `points` failures in the window the account is
 * guarded: an address that has itself failed on it (in its own window) is refused, 429 with Retry-After,
 * before its guess is even looked at; an address with no failure there still gets its try. A guesser
 * thus gets `points` tries, then one per address it has not used yet, per window, while the owner, from
 * an address that has not failed, is never locked out (an attacker cannot lock them out by failing).
 * Each count is one Redis key (`<prefix>:<account>` and `<prefix>:<account>|<address>`), so a Redis
 * Cluster spreads them like any other key.
 */
export class AccountLimit {
  private readonly failures: RateLimiterRedis;

  private readonly failed: RateLimiterRedis;

  constructor(
    redis: Redis | Cluster,
    private readonly options: { points: number; durationSeconds: number; keyPrefix: string },
  ) {
    this.failures = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: options.keyPrefix,
      points: options.points,
      duration: options.durationSeconds,
    });
    this.failed = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${options.keyPrefix}-by`,
      points: 1,
      duration: options.durationSeconds,
    });
  }

  /** 429 when the account is guarded and this address has failed on it; 503 when Redis cannot tell. */
  async check(account: string, address: string): Promise<void> {
    let counts: [RateLimiterRes | null, RateLimiterRes | null];
    try {
      counts = await Promise.all([this.failures.get(account), this.failed.get(`${account}|${address}`)]);
    } catch {
      throw ApiError.unavailable();
    }
    const [failures, mine] = counts;
    if (!failures || failures.consumedPoints < this.options.points || !mine) return;
    // Until either count ends: the account's window, or this address's failures with it.
    throw ApiError.tooManyRequests(Math.min(failures.msBeforeNext, mine.msBeforeNext) / 1000);
  }

  /** Counts a wrong guess of this address on this account. Best effort: the call is refused anyway. */
  async fail(account: string, address: string): Promise<void> {
    await Promise.all([this.failures.penalty(account, 1), this.failed.penalty(`${account}|${address}`, 1)]).catch(() => undefined);
  }

  /** A right answer from this address: its earlier typos no longer count against it (the account's count stays). */
  async succeed(account: string, address: string): Promise<void> {
    await this.failed.delete(`${account}|${address}`).catch(() => undefined);
  }
}
