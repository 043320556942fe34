import { generateKeyPairSync, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import {
  compactSigningKeys,
  compactVerifyingKey,
  generateRsaKeyPair,
  issueToken,
  keyFingerprint,
  openPrivateKey,
  rsaPublicKeyOf,
  sealPrivateKey,
  signingKeys,
  TokenRefused,
  VerifiedTokenCache,
  verifyToken,
  type SigningKeys,
} from '@pds/tokens';

let keys: SigningKeys;
let publicKeyPem: string;
beforeAll(async () => {
  const pair = await generateRsaKeyPair();
  publicKeyPem = pair.publicKeyPem;
  keys = signingKeys(pair.keyId, pair.privateKeyPem);
});

const NOW = 1_800_000_000;

describe('sealed private keys', () => {
  it('round-trips under the master key and fails under another', async () => {
    const { privateKeyPem } = await generateRsaKeyPair();
    const master = randomBytes(32);
    const sealed = sealPrivateKey(privateKeyPem, master);
    expect(sealed).not.toContain('PRIVATE KEY');
    expect(openPrivateKey(sealed, master)).toBe(privateKeyPem);
    expect(() => openPrivateKey(sealed, randomBytes(32))).toThrow();
  });

  it('detects tampering', async () => {
    const master = randomBytes(32);
    const sealed = sealPrivateKey('secret', master);
    const parts = sealed.split('.');
    const ciphertext = Buffer.from(parts[3] as string, 'base64url');
    ciphertext[0] = (ciphertext[0] as number) ^ 1;
    const flipped = [...parts.slice(0, 3), ciphertext.toString('base64url')].join('.');
    expect(() => openPrivateKey(flipped, master)).toThrow();
  });
});

describe('issue and verify', () => {
  const request = { issuer: 'alice.pds.test', subject: 'user-1', accessScope: 'owner' as const };

  it('signs with compact keys (private key kept as bytes) exactly as with parsed ones', async () => {
    const pair = await generateRsaKeyPair();
    const compact = compactSigningKeys(compactVerifyingKey(pair.keyId, pair.publicKeyPem), pair.privateKeyPem);
    const { token, claims } = issueToken(compact, request, NOW);
    expect(verifyToken(token, signingKeys(pair.keyId, pair.privateKeyPem).publicKey, 'alice.pds.test', NOW)).toEqual(claims);
    expect(keyFingerprint(compact.publicKey)).toBe(pair.keyId);
    expect(compact.privateKey.export({ type: 'pkcs8', format: 'pem' })).toBe(pair.privateKeyPem);
    expect(verifyToken(token, compact.publicKey, 'alice.pds.test', NOW)).toEqual(claims);
  });

  it.each([1024, 2048])('finds the RSAPublicKey inside an RSA-%i SubjectPublicKeyInfo as OpenSSL exports it', (bits) => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
    const spki = publicKey.export({ type: 'spki', format: 'der' });
    expect(rsaPublicKeyOf(spki).equals(publicKey.export({ type: 'pkcs1', format: 'der' }))).toBe(true);
  });

  it('refuses what is not an RSA SubjectPublicKeyInfo', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' });
    expect(() => rsaPublicKeyOf(ec)).toThrow('not an RSA public key');
    expect(() => rsaPublicKeyOf(Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff]))).toThrow('not an RSA public key');
    expect(() => rsaPublicKeyOf(Buffer.alloc(0))).toThrow('not an RSA public key');
  });

  it('issues RS256 tokens with kid and the contract claims', () => {
    const { token, claims } = issueToken(keys, request, NOW);
    const decoded = jwt.decode(token, { complete: true });
    expect(decoded?.header).toMatchObject({ alg: 'RS256', kid: keys.keyId });
    expect(claims).toMatchObject({
      iss: 'alice.pds.test',
      sub: 'user-1',
      iat: NOW,
      exp: NOW + 3 * 86400,
      auth_time: NOW,
      accessScope: 'owner',
    });
    expect(verifyToken(token, keys.publicKey, 'alice.pds.test', NOW + 10)).toEqual(claims);
    expect(keyFingerprint(publicKeyPem)).toBe(keys.keyId);
  });

  it('caps expiry at 30 days after the session began', () => {
    const { claims } = issueToken(keys, { ...request, authTime: NOW - 29 * 86400 }, NOW);
    expect(claims.exp).toBe(NOW + 86400);
  });

  it.each([
    ['expired', NOW + 3 * 86400, 'alice.pds.test'],
    ['wrong instance', NOW, 'bob.pds.test'],
  ])('refuses as %s', (cause, at, issuer) => {
    const { token } = issueToken(keys, request, NOW);
    expect(() => verifyToken(token, keys.publicKey, issuer, at)).toThrow(new TokenRefused(cause as never));
  });

  it('refuses a token without the contract claims as malformed', () => {
    const token = jwt.sign({ iss: 'alice.pds.test', sub: 'x' }, keys.privateKey, { algorithm: 'RS256' });
    expect(() => verifyToken(token, keys.publicKey, 'alice.pds.test', NOW)).toThrow(expect.objectContaining({ reason: 'malformed' }));
  });
});

describe('VerifiedTokenCache', () => {
  it('answers only within scope and until the token expires', () => {
    const cache = new VerifiedTokenCache();
    const { token, claims } = issueToken(keys, { issuer: 'a', subject: 's', accessScope: 'user' }, NOW);
    cache.set('instance-a', token, claims, NOW);
    expect(cache.get('instance-a', token, NOW + 1)).toEqual(claims);
    expect(cache.get('instance-b', token, NOW + 1)).toBeUndefined();
    expect(cache.get('instance-a', token, claims.exp)).toBeUndefined();
  });
});
