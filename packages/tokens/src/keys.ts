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

/**
 * The same keys, holding the private key as its DER bytes and parsing it on each use. A parsed RSA
 * private key costs ≈ 3.4 KiB of native memory, its bytes 1.2 KiB; signing is rare next to verifying
 * (log-ins, refreshes) and parsing DER costs far less than the RSA signature itself, so a gateway
 * that keeps the keys of 100,000 instances keeps them in this form.
 */
export function compactSigningKeys(keyId: string, privateKeyPem: string): SigningKeys {
  const parsed = createPrivateKey(privateKeyPem);
  const der = parsed.export({ type: 'pkcs8', format: 'der' });
  return {
    keyId,
    publicKey: createPublicKey(parsed),
    get privateKey() {
      return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    },
  };
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
