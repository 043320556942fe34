// Purpose-bound keys derived from the cluster master key, so the key that signs addresses never
// encrypts bytes (and neither is the key that wraps instance private keys).
import { hkdfSync } from 'node:crypto';

export type KeyPurpose = 'local-blob-addresses' | 'local-blob-encryption' | 'local-blob-names';

export function deriveKey(masterKey: Buffer, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), `pds/storage/${purpose}/v1`, 32));
}
