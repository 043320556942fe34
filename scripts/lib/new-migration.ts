// Writes a new migration: the SQL that takes one schema (by default the last committed one) to another
// (by default the working tree's). Prisma's `migrate dev` cannot do this on its WASM schema engine, which
// diffs only schema files against schema files, and needs a database connection even for that.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runPrisma, type Target } from './prisma';

const ROOT = path.resolve(__dirname, '../..');
/** Prisma writes this, and nothing else, when the two schemas agree. */
const EMPTY = /^\s*-- This is an empty migration\.\s*$/;

export interface NewMigration {
  target: Target;
  /** Letters, digits and underscores: the folder is `<UTC timestamp>_<name>`. */
  name: string;
  /** Any database on a reachable server: the schema engine connects before it diffs. */
  databaseUrl: string;
  /** Folder of the schema files before the change; default: the target's schema as committed at HEAD. */
  fromSchema?: string;
  /** Folder of the schema files after it; default: `prisma/<target>`. */
  toSchema?: string;
  /** Where the migration folders live; default: `prisma/<target>/migrations`. */
  migrationsDir?: string;
  now?: Date;
}

/** The new migration's file, or null when the schemas agree (nothing is written then). */
export function writeMigration(options: NewMigration): string | null {
  if (!/^\w+$/.test(options.name)) throw new Error(`a migration name takes letters, digits and underscores: ${options.name}`);
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pds-migration-'));
  try {
    const fromSchema = options.fromSchema ?? committedSchema(options.target, scratch);
    const toSchema = options.toSchema ?? path.join(ROOT, 'prisma', options.target);
    const sqlFile = path.join(scratch, 'migration.sql');
    const status = runPrisma(
      options.target,
      ['migrate', 'diff', '--from-schema-datamodel', fromSchema, '--to-schema-datamodel', toSchema, '--script', '--output', sqlFile],
      { url: options.databaseUrl, quiet: true },
    );
    if (status !== 0) throw new Error(`prisma migrate diff failed (exit ${status})`);
    const sql = readFileSync(sqlFile, 'utf8');
    if (EMPTY.test(sql)) return null;
    const stamp = (options.now ?? new Date()).toISOString().replace(/\D/g, '').slice(0, 14);
    const folder = path.join(options.migrationsDir ?? path.join(ROOT, 'prisma', options.target, 'migrations'), `${stamp}_${options.name}`);
    mkdirSync(folder, { recursive: true });
    const file = path.join(folder, 'migration.sql');
    writeFileSync(file, sql);
    return file;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The target's `.prisma` files as committed at HEAD, copied into a folder of `scratch`. */
function committedSchema(target: Target, scratch: string): string {
  const folder = path.join(scratch, 'committed');
  mkdirSync(folder);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const files = git('ls-tree', '--name-only', 'HEAD', `prisma/${target}/`)
    .split('\n')
    .filter((file) => file.endsWith('.prisma'));
  if (files.length === 0) throw new Error(`no committed schema under prisma/${target}/`);
  for (const file of files) writeFileSync(path.join(folder, path.basename(file)), git('show', `HEAD:${file}`));
  return folder;
}
