import { describeConfig, instanceUrl, loadConfig } from '@pds/config';

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
    });
  });

  it('names every invalid variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', CLUSTER_DOMAIN: 'not a domain', STORAGE: 'ftp' })).toThrow(/PORT.*CLUSTER_DOMAIN.*STORAGE/);
  });

  it('requires S3 settings with STORAGE=s3 and a 32-byte master key', () => {
    expect(() => loadConfig({ STORAGE: 's3' })).toThrow(/S3_ENDPOINT/);
    expect(() => loadConfig({ MASTER_KEY: 'abcd' })).toThrow(/MASTER_KEY/);
    expect(loadConfig({ MASTER_KEY: 'ab'.repeat(32) }).MASTER_KEY?.length).toBe(32);
  });

  it('parses the cluster gateway map', () => {
    expect(loadConfig({ CLUSTER_GATEWAYS: 'pds.test=http://127.0.0.1:8080/, Other.Example=http://10.0.0.5:80' }).CLUSTER_GATEWAYS).toEqual({
      'pds.test': 'http://127.0.0.1:8080',
      'other.example': 'http://10.0.0.5:80',
    });
    expect(() => loadConfig({ CLUSTER_GATEWAYS: 'pds.test' })).toThrow(/CLUSTER_GATEWAYS/);
  });

  it('never shows secrets in its description', () => {
    const text = JSON.stringify(
      describeConfig(loadConfig({ MASTER_KEY: 'ab'.repeat(32), DATABASE_URL: 'postgres://u:hunter2@db/pds', S3_SECRET_KEY: 's3cret' })),
    );
    expect(text).not.toMatch(/hunter2|s3cret|abababab/);
  });

  it('builds instance URLs with a non-default public port only', () => {
    expect(instanceUrl({ PUBLIC_URL_SCHEME: 'https', PUBLIC_PORT: 443 }, 'a.pds.test')).toBe('https://a.pds.test');
    expect(instanceUrl({ PUBLIC_URL_SCHEME: 'http', PUBLIC_PORT: 8080 }, 'a.pds.test')).toBe('http://a.pds.test:8080');
  });
});
