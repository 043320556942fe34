import { instanceUrl, loadConfig, loadConfigFor } from '@pds/config';

describe('loadConfig', () => {
  it('has the contract defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 8080,
      DEX_PORT: 8081,
      CLUSTER_DOMAIN: 'pds.localhost',
      SIGNED_URL_TTL: 300,
      UPLOAD_DEADLINE: 3600,
      MAX_UPLOAD_BYTES: 5 * 1024 ** 3,
      LOGIN_RATE_LIMIT: 10,
      LOGIN_RATE_WINDOW: 60,
      STORAGE: 'local',
      DEX_URL: 'http://127.0.0.1:8081',
      DEX_CLUSTERS: ['pds.localhost'],
      DEX_ADMINS: ['admin.pds.localhost'],
      QUOTA_BYTES: 1024 ** 3,
      QUOTA_RECORDS_BYTES: 256 * 1024 ** 2,
      TRASH_DAYS: 30,
    });
    expect(c.ADMIN_PORT).toBeUndefined();
  });

  it('takes an admin token of 32 characters or more only', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'short' })).toThrow(/ADMIN_TOKEN: must be at least 32 characters/);
    expect(loadConfig({ ADMIN_PORT: '8090', ADMIN_TOKEN: 'a'.repeat(32) })).toMatchObject({
      ADMIN_PORT: 8090,
      ADMIN_TOKEN: 'a'.repeat(32),
    });
  });

  it('names every invalid variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', CLUSTER_DOMAIN: 'not a domain', STORAGE: 'ftp' })).toThrow(/PORT.*CLUSTER_DOMAIN.*STORAGE/);
  });

  it('requires S3 settings with STORAGE=s3 and a 32-byte master key', () => {
    expect(() => loadConfig({ STORAGE: 's3' })).toThrow(/S3_ENDPOINT/);
    expect(() => loadConfig({ MASTER_KEY: 'abcd' })).toThrow(/MASTER_KEY: must be 32 bytes/);
    expect(loadConfig({ MASTER_KEY: 'ab'.repeat(32) }).MASTER_KEY?.length).toBe(32);
  });

  it('parses the cluster gateway map', () => {
    expect(loadConfig({ CLUSTER_GATEWAYS: 'pds.test=http://127.0.0.1:8080/, Other.Example=http://10.0.0.5:80' }).CLUSTER_GATEWAYS).toEqual({
      'pds.test': 'http://127.0.0.1:8080',
      'other.example': 'http://10.0.0.5:80',
    });
    expect(() => loadConfig({ CLUSTER_GATEWAYS: 'pds.test' })).toThrow(/CLUSTER_GATEWAYS/);
  });

  describe('TRUST_PROXY', () => {
    const trust = (value?: string) => loadConfig(value === undefined ? {} : { TRUST_PROXY: value }).TRUST_PROXY;

    it('trusts no one by default (the client is the socket peer), nor with false or 0', () => {
      expect([trust(), trust(''), trust('false'), trust('0')]).toEqual([0, 0, 0, 0]);
    });

    it('takes a hop count: how many proxies stand in front', () => {
      expect([trust('1'), trust(' 2 ')]).toEqual([1, 2]);
      expect(() => trust('17')).toThrow(/TRUST_PROXY: 17 proxies in front is more than any deployment has/);
    });

    it('takes addresses and CIDRs, IPv4 and IPv6, and the names loopback, linklocal, uniquelocal, mixed', () => {
      expect(trust('10.0.0.0/8, 172.16.0.0/12')).toEqual(['10.0.0.0/8', '172.16.0.0/12']);
      expect(trust('fd00::/8,2001:DB8::1,::1/128')).toEqual(['fd00::/8', '2001:db8::1', '::1/128']);
      expect(trust('loopback,192.0.2.7,fd00::/8,uniquelocal')).toEqual(['loopback', '192.0.2.7', 'fd00::/8', 'uniquelocal']);
    });

    it('names a bad entry: not an address, a prefix too long, a hop count inside a list', () => {
      expect(() => trust('10.0.0.0/33')).toThrow(/TRUST_PROXY: "10.0.0.0\/33" is not an address, a CIDR/);
      expect(() => trust('fd00::/129')).toThrow(/"fd00::\/129" is not an address/);
      expect(() => trust('proxy.internal')).toThrow(/"proxy.internal" is not an address/);
      expect(() => trust('10.0.0.1/8/8')).toThrow(/is not an address/);
      expect(() => trust('1,10.0.0.1')).toThrow(/"1": a hop count stands alone/);
    });

    it('refuses true, saying why', () => {
      for (const value of ['true', 'TRUE', ' true ']) {
        expect(() => trust(value)).toThrow(
          'Invalid configuration: TRUST_PROXY: "true" is refused: it believes X-Forwarded-For from any peer, so any client ' +
            'could write its own address there and escape every per-address limit. Name your proxies instead: how many stand ' +
            'in front of this process (TRUST_PROXY=1 for one proxy) or their addresses (TRUST_PROXY=10.0.0.0/8,fd00::/8)',
        );
      }
    });
  });

  it('builds instance URLs with a non-default public port only', () => {
    expect(instanceUrl({ PUBLIC_URL_SCHEME: 'https', PUBLIC_PORT: 443 }, 'a.pds.test')).toBe('https://a.pds.test');
    expect(instanceUrl({ PUBLIC_URL_SCHEME: 'http', PUBLIC_PORT: 8080 }, 'a.pds.test')).toBe('http://a.pds.test:8080');
  });
});

describe('loadConfigFor', () => {
  const key = 'ab'.repeat(32);

  it('names each variable a process requires and lacks', () => {
    expect(() => loadConfigFor('gateway', {})).toThrow(
      'Invalid configuration: DATABASE_URL: is required; REDIS_URL: is required; MASTER_KEY: is required',
    );
    expect(() => loadConfigFor('gateway-worker', { DATABASE_URL: 'postgres://db/pds', MASTER_KEY: key })).toThrow(
      /^Invalid configuration: REDIS_URL: is required$/,
    );
    expect(() => loadConfigFor('dex', { REDIS_URL: 'redis://r', MASTER_KEY: key })).toThrow(
      /^Invalid configuration: DEX_DATABASE_URL: is required$/,
    );
    expect(() => loadConfigFor('dex-worker', { DEX_DATABASE_URL: 'postgres://db/dex', REDIS_URL: 'redis://r' })).toThrow(
      /^Invalid configuration: MASTER_KEY: is required$/,
    );
    expect(() => loadConfigFor('gateway-migrate', {})).toThrow(/^Invalid configuration: DATABASE_URL: is required$/);
  });

  it('tells a bad value from a missing one', () => {
    expect(() => loadConfigFor('gateway-migrate', { DATABASE_URL: 'not a url' })).toThrow(/DATABASE_URL: Invalid URL/);
  });

  it('puts dex beside the gateway database when DEX_DATABASE_URL is unset', () => {
    const c = loadConfigFor('dex', { DATABASE_URL: 'postgres://u:p@db:5432/pds?sslmode=require', REDIS_URL: 'redis://r', MASTER_KEY: key });
    expect(c.DEX_DATABASE_URL).toBe('postgres://u:p@db:5432/pds_dex?sslmode=require');
    expect(
      loadConfigFor('dex-migrate', { DATABASE_URL: 'postgres://u:p@db/pds', DEX_DATABASE_URL: 'postgres://u:p@other/x' }).DEX_DATABASE_URL,
    ).toBe('postgres://u:p@other/x');
  });

  it('gives a process its required values typed and decoded', () => {
    const c = loadConfigFor('gateway', { DATABASE_URL: 'postgres://db/pds', REDIS_URL: 'redis://r', MASTER_KEY: key });
    expect(c.MASTER_KEY.equals(Buffer.from(key, 'hex'))).toBe(true);
    expect(c.REDIS_URL).toBe('redis://r');
  });

  it('takes a Redis Cluster (REDIS_CLUSTER_NODES) instead of REDIS_URL, never both', () => {
    const gateway = { DATABASE_URL: 'postgres://db/pds', MASTER_KEY: key };
    const c = loadConfigFor('gateway', { ...gateway, REDIS_CLUSTER_NODES: 'redis-0:6379, Redis-1:6380' });
    expect([c.REDIS_CLUSTER_NODES, c.REDIS_URL]).toEqual([['redis-0:6379', 'redis-1:6380'], undefined]);
    expect(() => loadConfigFor('gateway', { ...gateway, REDIS_CLUSTER_NODES: 'redis-0' })).toThrow(
      /^Invalid configuration: REDIS_CLUSTER_NODES\.0: must be host:port$/,
    );
    expect(() => loadConfigFor('gateway', { ...gateway, REDIS_URL: 'redis://r', REDIS_CLUSTER_NODES: 'redis-0:6379' })).toThrow(
      'set REDIS_URL (one server) or REDIS_CLUSTER_NODES (a cluster), not both',
    );
  });
});
