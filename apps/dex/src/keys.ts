// Dex's own RSA key: generated once, stored in dex's database with the private half sealed under
// MASTER_KEY (so every dex process and the worker use one key, and a database dump alone reveals nothing).
import type { DexKeyRepository } from '@pds/db';
import { generateRsaKeyPair, openPrivateKey, sealPrivateKey, signingKeys, type SigningKeys } from '@pds/tokens';

export async function loadOrCreateDexKeys(repo: DexKeyRepository, masterKey: Buffer): Promise<SigningKeys> {
  let stored = await repo.get();
  if (!stored) {
    const fresh = await generateRsaKeyPair();
    stored = await repo.createIfAbsent({
      keyId: fresh.keyId,
      publicKeyPem: fresh.publicKeyPem,
      privateKeyEnc: sealPrivateKey(fresh.privateKeyPem, masterKey),
    });
  }
  return signingKeys(stored.keyId, openPrivateKey(stored.privateKeyEnc, masterKey));
}
