// `pnpm migration`'s core: the migration written for a schema change is the SQL of that change, in a
// folder named by time and name, and an unchanged schema writes nothing.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeMigration } from '../scripts/lib/new-migration';

const ROOT = path.resolve(__dirname, '..');
let scratch: string;

beforeEach(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'new-migration-test-'));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

/** The gateway's schema files, copied, with `edit` applied to files.prisma. */
function editedSchema(edit: (source: string) => string): string {
  const folder = path.join(scratch, 'edited');
  cpSync(path.join(ROOT, 'prisma/gateway'), folder, { recursive: true, filter: (source) => !source.includes('migrations') });
  const file = path.join(folder, 'files.prisma');
  writeFileSync(file, edit(readFileSync(file, 'utf8')));
  return folder;
}

const common = () => ({
  target: 'gateway' as const,
  databaseUrl: process.env.TEST_PG_ADMIN_URL as string,
  fromSchema: path.join(ROOT, 'prisma/gateway'),
  migrationsDir: path.join(scratch, 'migrations'),
});

it('writes the SQL of a schema change as <UTC timestamp>_<name>/migration.sql', () => {
  const toSchema = editedSchema((source) => source.replace(/^model File \{$/m, 'model File {\n  note String?'));
  const file = writeMigration({ ...common(), name: 'file_note', toSchema, now: new Date('2026-12-01T08:09:10Z') });
  expect(file).toBe(path.join(scratch, 'migrations', '20261201080910_file_note', 'migration.sql'));
  expect(readFileSync(file as string, 'utf8')).toMatch(/ALTER TABLE "File" ADD COLUMN\s+"note" TEXT;/);
});

it('writes nothing when the schema has not changed, and refuses names that are not one word', () => {
  expect(writeMigration({ ...common(), name: 'nothing', toSchema: path.join(ROOT, 'prisma/gateway') })).toBeNull();
  expect(() => writeMigration({ ...common(), name: '../escape', toSchema: path.join(ROOT, 'prisma/gateway') })).toThrow('letters, digits');
  expect(readdirSync(scratch)).toEqual([]);
});
