// The per-account limit (AccountLimit) on both kinds of Redis a deployment may have, over the
// request-path connection the processes use: a guessing spread over many addresses is refused once the
// account has failed often enough, but only at the addresses that failed; and what a per-address limit
// counts (limitedAddress).
import { randomBytes } from 'node:crypto';
import { redisTarget, requestRedis, type RedisClient } from '../../queue/src';
import { REDIS_KINDS, type RedisUnderTest } from '../../../test/support/private-services';
import { AccountLimit, ApiError, limitedAddress } from '../src';

jest.setTimeout(60_000);

describe('limitedAddress', () => {
  it('counts an IPv4 address as itself, an IPv6 one by its /64 however it is written', () => {
    expect(limitedAddress('192.0.2.7')).toBe('192.0.2.7');
    expect(limitedAddress('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(limitedAddress('2001:DB8:1:2::ffff')).toBe('2001:db8:1:2::/64');
    expect(limitedAddress('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(limitedAddress('2001:0db8:0000:0000:0001::')).toBe('2001:db8:0:0::/64');
    expect(limitedAddress('::1')).toBe('0:0:0:0::/64');
  });
});

/** The refusal a call ends with, or undefined when it went through. */
async function refusal(call: Promise<void>): Promise<ApiError | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

const ready = (client: RedisClient) =>
  client.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => client.once('ready', () => resolve()));

describe.each(Object.keys(REDIS_KINDS) as (keyof typeof REDIS_KINDS)[])('AccountLimit on %s', (kind) => {
  let redis: RedisUnderTest;
  let client: RedisClient;
  const limit = (points: number, durationSeconds = 60) =>
    new AccountLimit(client, { points, durationSeconds, keyPrefix: `test-${randomBytes(4).toString('hex')}:account` });
  const addresses = Array.from({ length: 20 }, (_, i) => `198.51.100.${i + 1}`);

  beforeAll(async () => {
    redis = await REDIS_KINDS[kind]();
    const env = redis.env;
    client = requestRedis(redisTarget({ REDIS_URL: env.REDIS_URL, REDIS_CLUSTER_NODES: env.REDIS_CLUSTER_NODES?.split(',') }));
    await ready(client);
  });
  afterAll(async () => {
    client.disconnect();
    await redis.destroy();
  });

  it('refuses, past the limit of failures from every address together, only the addresses that failed', async () => {
    const guard = limit(5);
    // One failure from each of five addresses: no address is over any limit of its own.
    for (const address of addresses.slice(0, 5)) {
      expect(await refusal(guard.check('alice', address))).toBeUndefined();
      await guard.fail('alice', address);
    }
    for (const address of addresses.slice(0, 5)) {
      const refused = await refusal(guard.check('alice', address));
      expect([refused?.status, Number(refused?.extra.headers?.['Retry-After'])]).toEqual([429, expect.any(Number)]);
      expect(Number(refused?.extra.headers?.['Retry-After'])).toBeGreaterThan(0);
      expect(Number(refused?.extra.headers?.['Retry-After'])).toBeLessThanOrEqual(60);
    }
    // An address that has not failed still gets its try (the owner is not locked out); it fails, and it is refused too.
    expect(await refusal(guard.check('alice', addresses[5]!))).toBeUndefined();
    await guard.fail('alice', addresses[5]!);
    expect((await refusal(guard.check('alice', addresses[5]!)))?.status).toBe(429);
    // Another account of the same addresses is its own.
    expect(await refusal(guard.check('bob', addresses[0]!))).toBeUndefined();
  });

  it('below the limit refuses no one, and a right answer clears that address, not the account', async () => {
    const guard = limit(3);
    await guard.fail('carol', addresses[0]!);
    await guard.fail('carol', addresses[0]!);
    expect(await refusal(guard.check('carol', addresses[0]!))).toBeUndefined();
    await guard.fail('carol', addresses[1]!);
    expect((await refusal(guard.check('carol', addresses[0]!)))?.status).toBe(429);
    await guard.succeed('carol', addresses[0]!);
    expect(await refusal(guard.check('carol', addresses[0]!))).toBeUndefined();
    expect((await refusal(guard.check('carol', addresses[1]!)))?.status).toBe(429);
  });

  it('lets the addresses try again when the window ends, as Retry-After said', async () => {
    const guard = limit(2, 1);
    await guard.fail('dave', addresses[0]!);
    await guard.fail('dave', addresses[1]!);
    const refused = await refusal(guard.check('dave', addresses[0]!));
    expect([refused?.status, refused?.extra.headers?.['Retry-After']]).toEqual([429, '1']);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await refusal(guard.check('dave', addresses[0]!))).toBeUndefined();
  });

  it('answers 503 while Redis cannot count, never letting a guess through uncounted', async () => {
    const guard = limit(2);
    await redis.stop();
    expect((await refusal(guard.check('erin', addresses[0]!)))?.status).toBe(503);
  });
});
