// Master-key rotation (apps/gateway/src/rotate-key-main.ts): instance keys re-sealed under a new key serve logins on a gateway that holds
// only the new key; a second run changes nothing; a key sealed under neither stops the run unchanged.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { createLogger } from '@pds/runtime';
import { resealInstanceKeys } from '@pds/db';
import { generateRsaKeyPair, openPrivateKey, resealPrivateKey, sealPrivateKey } from '@pds/tokens';
import { createApp } from '../src/app';
import { signUp, STRONG_PASSWORD } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';

describe('rotating the master key', () => {
  const { gw } = useGateway();
  // The first test rotates from the gateway's key to `rotated`; the second starts from there.
  const rotated = randomBytes(32);

  const gatewayWithKey = (masterKey: Buffer) =>
    createApp({
      config: gw.config,
      db: gw.db,
      redis: gw.redis,
      logger: createLogger({ level: 'silent' }),
      masterKey,
      dexRegistration: gw.dexRegistration,
      blobStore: gw.blobStore,
      redisPrefix: gw.redisPrefix,
    }).app;

  it('re-seals every instance key, keeping the key itself, and the instances work under the new key only', async () => {
    const current = gw.config.MASTER_KEY as Buffer;
    const next = rotated;
    const owners = [await signUp(gw.app, 'alice'), await signUp(gw.app, 'bob')];
    const before = await gw.db.instance.findMany({ orderBy: { id: 'asc' } });

    expect(await resealInstanceKeys(gw.db, (sealed) => resealPrivateKey(sealed, current, next))).toBe(before.length);

    const after = await gw.db.instance.findMany({ orderBy: { id: 'asc' } });
    expect(after.map((i) => openPrivateKey(i.privateKeyEnc, next))).toEqual(before.map((i) => openPrivateKey(i.privateKeyEnc, current)));
    expect(() => openPrivateKey(after[0]!.privateKeyEnc, current)).toThrow();
    const app = gatewayWithKey(next);
    for (const owner of owners) {
      const login = await request(app)
        .get('/users/access_token')
        .set('Host', owner.address)
        .set('username', owner.username)
        .set('password', STRONG_PASSWORD);
      expect(login.status).toBe(200);
      expect(
        (await request(app).get('/users/access_token/validate').set('Host', owner.address).set('X-Auth-Token', login.body.accessToken))
          .status,
      ).toBe(200);
    }
    // Run again: everything is under the new key already.
    expect(await resealInstanceKeys(gw.db, (sealed) => resealPrivateKey(sealed, current, next))).toBe(0);
  });

  it('stops without changing a row when a key is sealed under neither key', async () => {
    const [current, next] = [rotated, randomBytes(32)];
    const stranger = sealPrivateKey((await generateRsaKeyPair()).privateKeyPem, randomBytes(32));
    const instance = await gw.db.instance.findFirstOrThrow();
    // …Many: Prisma then asks for no RETURNING, whose enum casts a Citus coordinator refuses on the reference table Instance.
    await gw.db.instance.updateMany({ where: { id: instance.id }, data: { privateKeyEnc: stranger } });
    const before = await gw.db.instance.findMany({ orderBy: { id: 'asc' } });

    await expect(resealInstanceKeys(gw.db, (sealed) => resealPrivateKey(sealed, current, next))).rejects.toThrow();
    expect(await gw.db.instance.findMany({ orderBy: { id: 'asc' } })).toEqual(before);
  });
});
