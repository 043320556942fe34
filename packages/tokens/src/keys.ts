// Instance key pairs: RSA-2048, the private half encrypted at rest under the cluster master key.
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  KeyObject,
  randomBytes,
} from 'node:crypto';
import { promisify } from 'node:util';

const generateKeyPairAsync = promisify(generateKeyPair);

export interface KeyPairPem {
  publicKeyPem: string;
  privateKeyPem: string;
  keyId: string;
}

/** Parsed keys: parsing a PEM costs more than an RSA verify, so keys are parsed once and kept. */
export interface SigningKeys {
  keyId: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export async function generateRsaKeyPair(): Promise<KeyPairPem> {
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKeyPem: publicKey, privateKeyPem: privateKey, keyId: keyFingerprint(publicKey) };
}

/** SHA-256 of the DER public key, base64url: the `kid` of tokens and the fingerprint dex stores. */
export function keyFingerprint(publicKeyPem: string | KeyObject): string {
  const key = typeof publicKeyPem === 'string' ? createPublicKey(publicKeyPem) : publicKeyPem;
  return createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

const SEALED_PREFIX = 'v1.';

/** AES-256-GCM: `v1.<base64url iv>.<base64url tag>.<base64url ciphertext>`. */
export function sealPrivateKey(privateKeyPem: string, masterKey: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
  const ciphertext = Buffer.concat([cipher.update(privateKeyPem, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + [iv, cipher.getAuthTag(), ciphertext].map((b) => b.toString('base64url')).join('.');
}

export function openPrivateKey(sealed: string, masterKey: Buffer): string {
  const parts = sealed.startsWith(SEALED_PREFIX) ? sealed.slice(SEALED_PREFIX.length).split('.') : [];
  if (parts.length !== 3) throw new Error('sealed private key has an unknown format');
  const [iv, tag, ciphertext] = parts.map((p) => Buffer.from(p, 'base64url')) as [Buffer, Buffer, Buffer];
  const decipher = createDecipheriv('aes-256-gcm', masterKey, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
}

export function signingKeys(keyId: string, privateKeyPem: string): SigningKeys {
  const privateKey = createPrivateKey(privateKeyPem);
  return { keyId, privateKey, publicKey: createPublicKey(privateKey) };
}

/** PEM `PUBLIC KEY` (SPKI) with a trailing newline, as clients of the original system expect. */
export function publicKeyPem(key: KeyObject): string {
  return key.export({ type: 'spki', format: 'pem' }).toString();
}

/** An instance's public key, which is all that verifying its tokens needs. */
export interface VerifyingKey {
  keyId: string;
  publicKey: KeyObject;
}

/**
 * The public key in the form a gateway keeps for each of up to 100,000 instances: its PKCS#1 DER
 * (RSAPublicKey, 270 bytes for RSA-2048) taken out of the SPKI PEM, parsed for each use, a token's
 * first verification (verified tokens are cached): ≈ 5 µs against ≈ 20 µs for the verification. SPKI
 * PEM or DER take ≈ 100 µs to parse (OpenSSL 3's generic decoder), and a parsed key kept per instance,
 * with what that decoding leaves to the allocator, cost ≈ 1.5 KiB more of RSS per instance
 * (docs/performance.md). No OpenSSL work is done here.
 */
export function compactVerifyingKey(keyId: string, publicKeyPem: string): VerifyingKey {
  const rsaPublicKey = ownBuffer(rsaPublicKeyOf(pemBytes(publicKeyPem)));
  return {
    keyId,
    get publicKey() {
      return createPublicKey({ key: rsaPublicKey, format: 'der', type: 'pkcs1' });
    },
  };
}

/**
 * The signing keys of an instance whose public half is `verifying`, with the private key kept as its
 * DER (PKCS#8 PEM is the base64 of it; a sealed key opened under the master key is one this cluster
 * made) and parsed for each signature: log-ins and refreshes, rare next to verifying, and the parse
 * costs far less than the RSA signature.
 */
export function compactSigningKeys(verifying: VerifyingKey, privateKeyPem: string): SigningKeys {
  const der = ownBuffer(pemBytes(privateKeyPem));
  return {
    keyId: verifying.keyId,
    get publicKey() {
      return verifying.publicKey;
    },
    get privateKey() {
      return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    },
  };
}

const pemBytes = (pem: string) => Buffer.from(pem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');

/**
 * A copy in memory of its own: a small Buffer is a slice of Node's shared 8 KiB pool, and keeping it
 * would keep that whole slab (with whatever else was allocated in it) for as long as it is cached.
 */
function ownBuffer(bytes: Uint8Array): Buffer {
  const own = Buffer.allocUnsafeSlow(bytes.length);
  own.set(bytes);
  return own;
}

/**
 * The RSAPublicKey (PKCS#1) inside an RSA SubjectPublicKeyInfo (RFC 5280):
 * SEQUENCE { SEQUENCE { rsaEncryption, NULL }, BIT STRING { 0 unused bits, RSAPublicKey } }.
 */
export function rsaPublicKeyOf(spki: Buffer): Buffer {
  const info = derElement(spki, 0, 0x30);
  const algorithm = derElement(spki, info.start, 0x30);
  if (!spki.subarray(algorithm.start, algorithm.start + RSA_ENCRYPTION.length).equals(RSA_ENCRYPTION))
    throw new Error('not an RSA public key');
  const bits = derElement(spki, algorithm.end, 0x03);
  if (spki[bits.start] !== 0) throw new Error('not an RSA public key');
  return spki.subarray(bits.start + 1, bits.end);
}

/** OBJECT IDENTIFIER 1.2.840.113549.1.1.1 (rsaEncryption), as DER. */
const RSA_ENCRYPTION = Buffer.from('06092a864886f70d010101', 'hex');

/** The content of the DER element at `at`, which must have `tag` (definite length, short or long form). */
function derElement(der: Buffer, at: number, tag: number): { start: number; end: number } {
  if (der[at] !== tag) throw new Error('not an RSA public key');
  const first = der[at + 1] ?? 0;
  if (first < 0x80) return { start: at + 2, end: at + 2 + first };
  const lengthBytes = first & 0x7f;
  const start = at + 2 + lengthBytes;
  const end = start + der.readUIntBE(at + 2, lengthBytes);
  if (lengthBytes > 4 || end > der.length) throw new Error('not an RSA public key');
  return { start, end };
}

/**
 * The sealed key re-sealed under `to`, or null when it is sealed under `to` already (so a rotation that
 * stopped half-way can run again). Throws when neither key opens it: nothing is overwritten then.
 */
export function resealPrivateKey(sealed: string, from: Buffer, to: Buffer): string | null {
  try {
    openPrivateKey(sealed, to);
    return null;
  } catch {
    return sealPrivateKey(openPrivateKey(sealed, from), to);
  }
}
