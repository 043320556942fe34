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
 * The same keys, in the form a gateway keeps for each of up to 100,000 instances: the private key as
 * its DER bytes (1.2 KiB), parsed for each signature (log-ins and refreshes: rare next to verifying,
 * and parsing costs far less than the RSA signature), and the public key parsed from its PEM. The
 * private key is not parsed here: PKCS#8 PEM is the base64 of the DER, and a sealed key opened under
 * the master key is one this cluster made. Parsing it only to export its bytes cost ≈ 280 µs per
 * instance resolved and left ≈ 3.4 KiB of freed native memory behind each time (docs/performance.md).
 */
export function compactSigningKeys(keyId: string, privateKeyPem: string, publicKeyPem: string): SigningKeys {
  const decoded = Buffer.from(privateKeyPem.replace(/-----(BEGIN|END) PRIVATE KEY-----|\s/g, ''), 'base64');
  // A copy of its own: a small Buffer is a slice of Node's shared 8 KiB pool, and keeping it would keep
  // that whole slab (with whatever else was allocated in it) for as long as the instance stays cached.
  const der = Buffer.allocUnsafeSlow(decoded.length);
  decoded.copy(der);
  return {
    keyId,
    publicKey: createPublicKey(publicKeyPem),
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
