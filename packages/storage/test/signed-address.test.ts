// The local store's address signatures: the MAC is HMAC-SHA256 exactly as node:crypto computes it, so
// a token signed by any gateway (or any version of this code) verifies on every other.
import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { HmacSha256 } from '../src/hmac';
import { AddressSigner } from '../src/signed-address';

const reference = (key: Buffer, message: string) => createHmac('sha256', key).update(message).digest('base64url');

it('computes HMAC-SHA256 for keys of every length and any message, one call after another', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 200 }),
      fc.array(fc.string({ unit: 'grapheme', maxLength: 1500 }), { minLength: 1, maxLength: 5 }),
      (key, messages) => {
        const mac = new HmacSha256(Buffer.from(key));
        for (const message of messages) expect(mac.digest(message)).toBe(reference(Buffer.from(key), message));
      },
    ),
  );
});

it('matches the RFC 4231 test vector 2 (a key shorter than the block)', () => {
  const mac = new HmacSha256(Buffer.from('Jefe'));
  expect(Buffer.from(mac.digest('what do ya want for nothing?'), 'base64url').toString('hex')).toBe(
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  );
});

it('signs tokens that an HMAC computed with createHmac verifies, and refuses altered ones', () => {
  const key = randomBytes(32);
  const signer = new AddressSigner(key);
  const token = signer.sign('alice.pds.test/ünïcode "quoted" name', 'GET', 2_000_000_000_000);
  const [payload, signature] = token.split('.') as [string, string];
  expect(signature).toBe(reference(key, payload));
  expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toEqual({
    k: 'alice.pds.test/ünïcode "quoted" name',
    m: 'GET',
    e: 2_000_000_000_000,
  });
  expect(signer.verify(token, 'GET', 1_999_999_999_999)).toBe('alice.pds.test/ünïcode "quoted" name');
  expect(signer.verify(token, 'PUT', 1_999_999_999_999)).toBeNull();
  expect(signer.verify(token, 'GET', 2_000_000_000_001)).toBeNull();
  expect(signer.verify(`${payload}.${reference(randomBytes(32), payload)}`, 'GET', 0)).toBeNull();
});
