// Bulk SQL seeding for `pnpm bench`: far faster than the API for 100,000 files and 10,000 instances.
// Seeded instances share the key pair of an instance made through the API (so tokens verify) and differ
// in everything else: address, owner, files.
import pg from 'pg';
import { issueToken, openPrivateKey, signingKeys } from '@pds/tokens';

export interface SeedInstance {
  id: string;
  address: string;
  ownerId: string;
  publicKeyPem: string;
  privateKeyEnc: string;
  keyId: string;
}

export async function instanceByAddress(db: pg.Client, address: string): Promise<SeedInstance> {
  const { rows } = await db.query(
    `SELECT i.id, i.address, i."publicKeyPem", i."privateKeyEnc", i."keyId", u.id AS "ownerId"
       FROM "Instance" i JOIN "User" u ON u."instanceId" = i.id AND u.kind = 'owner' WHERE i.address = $1`,
    [address],
  );
  if (!rows[0]) throw new Error(`no instance ${address}`);
  return rows[0] as SeedInstance;
}

/** `count` completed files `bench<n>.txt` in the instance, newest first by number. */
export async function seedFiles(db: pg.Client, instance: SeedInstance, count: number): Promise<void> {
  await db.query(
    `INSERT INTO "File" ("instanceId", "fileId", "name", "source", "tags", "title", "status", "size", "uploaderId", "dateCreated", "lastUpdated")
     SELECT $1, 'bench' || g || '.txt', 'bench' || g || '.txt', 'bench', ARRAY['t' || (g % 10)], 'file number ' || g,
            'Completed', 1024, $2, now() - g * interval '1 second', now() - g * interval '1 second'
       FROM generate_series(1, $3::int) g`,
    [instance.id, instance.ownerId, count],
  );
  await db.query('ANALYZE "File"');
}

export async function seedRecords(
  db: pg.Client,
  instance: SeedInstance,
  namespace: string,
  endpoint: string,
  count: number,
): Promise<void> {
  await db.query(
    `INSERT INTO "DataRecord" ("instanceId", "recordId", "namespace", "endpoint", "data", "bytes")
     SELECT $1, gen_random_uuid(), $2, $3, d.data, octet_length(d.data::text) FROM generate_series(1, $4::int) g,
       LATERAL (SELECT jsonb_build_object('title', 'note ' || g, 'rank', g) AS data) d`,
    [instance.id, namespace, endpoint, count],
  );
}

/**
 * `count` instances `spread<n>.<cluster>`, each with an owner and one completed file `one.txt`;
 * returns each one's address and an owner token.
 */
export async function seedSpread(
  db: pg.Client,
  keySource: SeedInstance,
  masterKey: Buffer,
  cluster: string,
  count: number,
): Promise<{ address: string; token: string }[]> {
  const { rows } = await db.query(
    `WITH i AS (
       INSERT INTO "Instance" (id, address, "publicKeyPem", "privateKeyEnc", "keyId", "dexState")
       SELECT gen_random_uuid(), 'spread' || g || '.' || $1, $2, $3, $4, 'registered' FROM generate_series(1, $5::int) g
       RETURNING id, address),
     u AS (
       INSERT INTO "User" (id, "instanceId", username, email, "fullName", kind)
       SELECT gen_random_uuid(), i.id, split_part(i.address, '.', 1), split_part(i.address, '.', 1) || '@example.com', 'Spread', 'owner' FROM i
       RETURNING id, "instanceId"),
     f AS (
       INSERT INTO "File" ("instanceId", "fileId", "name", "source", "status", "size", "uploaderId", "dateCreated", "lastUpdated")
       SELECT u."instanceId", 'one.txt', 'one.txt', 'bench', 'Completed', 1024, u.id, now(), now() FROM u)
     SELECT i.address, u.id AS "ownerId" FROM i JOIN u ON u."instanceId" = i.id`,
    [cluster, keySource.publicKeyPem, keySource.privateKeyEnc, keySource.keyId, count],
  );
  await db.query('ANALYZE "Instance"; ANALYZE "User"; ANALYZE "File"');
  const keys = signingKeys(keySource.keyId, openPrivateKey(keySource.privateKeyEnc, masterKey));
  const now = Math.floor(Date.now() / 1000);
  return (rows as { address: string; ownerId: string }[]).map((row) => ({
    address: row.address,
    token: issueToken(keys, { issuer: row.address, subject: row.ownerId, accessScope: 'owner' }, now).token,
  }));
}

/**
 * An app pushed to the instance, stored as a push stores it (the record with its defaults filled in),
 * but not set up: the bench sets it up and gets its token through the API, as an owner would.
 */
export async function seedApplication(db: pg.Client, instance: SeedInstance, namespace: string, url: string): Promise<void> {
  const record = {
    id: namespace,
    title: `The ${namespace} app`,
    namespace,
    description: '',
    logoUrl: `${url}logo.png`,
    url,
    authUrl: '',
    browser: true,
    category: 'app',
    setup: false,
    loginAvailable: false,
    dataRead: [],
  };
  await db.query(
    `INSERT INTO "Application" ("instanceId", "appId", "record", "version", "receivedAt") VALUES ($1, $2, $3::jsonb, 1, now())`,
    [instance.id, namespace, JSON.stringify(record)],
  );
}
