// Measures what one instance costs the gateway database, for docs/deploy.md's data-tier figures:
// seeds a scratch database (real migrations, real key and password-hash sizes) with a stated
// per-instance profile, then reads each table's size on disk, indexes and TOAST included.
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx scripts/data-tier.ts [instances]
// The scratch database is dropped at the end.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { generateRsaKeyPair, sealPrivateKey, hashPassword } from '@pds/tokens';
import { ensureDatabase, withDatabase } from './lib/postgres';
import { migrate } from './lib/prisma';

/** Per instance: what a moderately active person and a few apps leave behind. */
const PROFILE = { users: 3, apps: 2, grants: 2, files: 200, permissionsPerFile: 1.5, records: 1000 };

async function main(): Promise<void> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('DATABASE_URL: is required (a server where a scratch database may be created)');
  const instances = Number(process.argv[2] ?? 200);
  const name = `pds_data_tier_${process.pid}`;
  const url = await ensureDatabase(adminUrl, name);
  try {
    await migrate('gateway', url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await seed(client, instances);
      await client.query('VACUUM ANALYZE');
      await report(client, instances);
    } finally {
      await client.end();
    }
  } finally {
    const admin = new pg.Client({ connectionString: withDatabase(adminUrl, 'postgres') });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)}`);
    await admin.end();
  }
}

async function seed(client: pg.Client, instances: number): Promise<void> {
  const keys = await generateRsaKeyPair();
  const sealed = sealPrivateKey(keys.privateKeyPem, randomBytes(32));
  const hash = await hashPassword('correct-horse-battery-staple');
  const record = JSON.stringify({
    id: 'notes',
    title: 'Notes',
    namespace: 'notes',
    description: 'Keeps notes for you and your devices',
    logoUrl: 'https://notes.example/logo.png',
    url: 'https://notes.example',
    authUrl: '/auth',
    browser: false,
    category: 'app',
    setup: true,
    loginAvailable: true,
    dataRead: ['calendar'],
  });
  // Row contents vary per row (md5 of the row number), so compression sees realistic, not repeated, text.
  await client.query(
    `INSERT INTO "Instance" (id, address, "publicKeyPem", "privateKeyEnc", "keyId", "dexState")
     SELECT gen_random_uuid(), 'user' || i || '.pds.example.com', $1, $2 || md5(i::text), md5(i::text), 'registered' FROM generate_series(1, $3) i`,
    [keys.publicKeyPem, sealed, instances],
  );
  await client.query(
    `INSERT INTO "User" (id, "instanceId", username, email, "fullName", "passwordHash", kind)
     SELECT gen_random_uuid(), i.id, 'u' || n || md5(i.id::text || n), 'someone' || n || '@example.com', 'Some One ' || n, $1,
            (CASE n WHEN 1 THEN 'owner' WHEN 2 THEN 'user' ELSE 'application' END)::"UserKind"
     FROM "Instance" i, generate_series(1, $2) n`,
    [hash, PROFILE.users],
  );
  await client.query(
    `INSERT INTO "Application" ("instanceId", "appId", record, version, "receivedAt", setup, enabled, "setupVersion")
     SELECT i.id, 'app' || n, $1::jsonb, 1, now(), true, true, 1 FROM "Instance" i, generate_series(1, $2) n`,
    [record, PROFILE.apps],
  );
  await client.query(
    `INSERT INTO "DataGrant" ("instanceId", "userId", namespace, endpoint, access)
     SELECT u."instanceId", u.id, 'ns' || n, '*', 'read' FROM "User" u, generate_series(1, $1) n WHERE u.kind = 'user'`,
    [PROFILE.grants],
  );
  await client.query(
    `INSERT INTO "File" ("instanceId", "fileId", name, source, tags, title, description, status, size, "contentPublic", "dateCreated", "lastUpdated", "uploaderId")
     SELECT i.id, 'camera' || n || '-' || left(md5(i.id::text || n), 8) || '.jpg', 'photo ' || n || '.jpg', 'camera',
            ARRAY['2026', 'holiday', left(md5(n::text), 6)], 'Beach day ' || n,
            'A description of photo ' || n || ': ' || md5(i.id::text || n) || ' ' || md5(n::text), 'Completed', 1048576, false, now(), now(), u.id
     FROM "Instance" i JOIN "User" u ON u."instanceId" = i.id AND u.kind = 'owner', generate_series(1, $1) n`,
    [PROFILE.files],
  );
  await client.query(
    `INSERT INTO "FileIdCounter" ("instanceId", base, ext, last) SELECT "instanceId", left("fileId", length("fileId") - 4), '.jpg', 0 FROM "File"`,
  );
  // The uploader's permission on every file, a shared one on every second file: 1.5 per file.
  await client.query(
    `INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable")
     SELECT f."instanceId", f."fileId", u.id, true FROM "File" f JOIN "User" u ON u."instanceId" = f."instanceId" AND u.kind = 'owner'
     UNION ALL
     SELECT f."instanceId", f."fileId", u.id, false FROM "File" f JOIN "User" u ON u."instanceId" = f."instanceId" AND u.kind = 'user'
     WHERE hashtext(f."fileId") % 2 = 0`,
  );
  await client.query(
    `INSERT INTO "DataRecord" ("instanceId", "recordId", namespace, endpoint, data, bytes)
     SELECT i.id, gen_random_uuid(), 'notes', 'items', d.data, octet_length(d.data::text)
     FROM "Instance" i, generate_series(1, $1) n,
       LATERAL (SELECT jsonb_build_object('title', 'Note ' || n, 'body', md5(i.id::text || n) || ' ' || md5(n::text) || ' ' || md5(i.id::text),
                                          'rank', n, 'tags', jsonb_build_array('a', 'b'), 'createdAt', now()) AS data) d`,
    [PROFILE.records],
  );
}

async function report(client: pg.Client, instances: number): Promise<void> {
  const { rows } = await client.query<{ table: string; rows: string; bytes: string }>(
    `SELECT c.relname AS table, c.reltuples::bigint AS rows, pg_total_relation_size(c.oid) AS bytes
     FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
     WHERE s.nspname = 'public' AND c.relkind = 'r' AND c.relname <> '_prisma_migrations' ORDER BY 3 DESC`,
  );
  let total = 0;
  console.log(`profile per instance: ${JSON.stringify(PROFILE)}; ${instances} instances\n`);
  console.log('| table | rows per instance | bytes per row (with indexes) | bytes per instance |');
  console.log('|---|---:|---:|---:|');
  for (const row of rows) {
    const count = Number(row.rows);
    const bytes = Number(row.bytes);
    total += bytes;
    const perRow = count > 0 ? Math.round(bytes / count) : 0;
    console.log(`| ${row.table} | ${(count / instances).toFixed(1)} | ${perRow} | ${Math.round(bytes / instances)} |`);
  }
  console.log(`| **total** | | | **${Math.round(total / instances)}** (${(total / instances / 1024 ** 2).toFixed(2)} MiB) |`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
