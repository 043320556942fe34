// Shared by the Prisma CLI configs: the JS (WASM) schema engine reaches Postgres through this adapter,
// so no native engine is downloaded (this platform cannot fetch Prisma's native engines).
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';

// prisma/orm#27403: adapter-pg 6.x cannot map some catalog types used during introspection; report them as text.
const CATALOG_TEXT_OIDS = new Set([18, 19, 22, 24, 30, 194, 2205]);
type ResultProto = { addFields(fields: { dataTypeID: number }[]): void };
const resultProto = (pg as unknown as { Result: { prototype: ResultProto } }).Result.prototype;
const addFields = resultProto.addFields;
resultProto.addFields = function (fields) {
  for (const f of fields) if (CATALOG_TEXT_OIDS.has(f.dataTypeID)) f.dataTypeID = 25;
  return addFields.call(this, fields);
};

export function cliAdapter(urlVariable: string) {
  const raw = process.env[urlVariable];
  if (!raw) throw new Error(`${urlVariable} is not set`);
  // Discrete fields, not connectionString: adapter-pg 6.x builds the shadow pool as { ...config, database },
  // and a connectionString would silently point the shadow pool at the main database.
  const u = new URL(raw);
  return new PrismaPg({
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: u.pathname.slice(1),
    idleTimeoutMillis: 100,
  });
}
