// Runs the Prisma CLI for one of the two databases with the settings this platform needs (JS engine,
// no update checks, no lingering timers).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
// Not from @pds/db's index: jest's global setup loads this without the mapping Prisma's generated client needs.
import { applyMigrations } from '../../packages/db/src/migrations';

export type Target = 'gateway' | 'dex';
export const URL_VARIABLE: Record<Target, string> = { gateway: 'DATABASE_URL', dex: 'DEX_DATABASE_URL' };
const root = path.resolve(__dirname, '../..');

export function runPrisma(target: Target, args: string[], options: { url?: string; quiet?: boolean } = {}): number {
  const variable = URL_VARIABLE[target];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CHECKPOINT_DISABLE: '1',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${path.join(root, 'scripts/unref-timers.cjs')}`.trim(),
  };
  if (options.url) env[variable] = options.url;
  // `prisma generate` reads the schema, which names the URL variable, but never connects.
  if (args[0] === 'generate') env[variable] ??= 'postgresql://localhost/unused';
  const result = spawnSync(
    path.join(root, 'node_modules/.bin/prisma'),
    [...args, '--config', path.join(root, `prisma/${target}.config.ts`)],
    {
      cwd: root,
      env,
      stdio: options.quiet ? 'pipe' : 'inherit',
    },
  );
  if (options.quiet && result.status !== 0) process.stderr.write(result.stdout + result.stderr.toString());
  if (args[0] === 'generate' && result.status === 0) nameNullTypes(target);
  return result.status ?? 1;
}

/**
 * Prisma's generated client exports its JSON null sentinels (DbNull, JsonNull, AnyNull) with the type of a
 * class the runtime does not export, which TypeScript cannot write into @pds/db's `.d.ts` (TS4094,
 * prisma/orm#29549). Annotating them with a type query that names the runtime's exported constant gives
 * the same type a printable name.
 */
function nameNullTypes(target: Target): void {
  for (const file of ['prismaNamespace.ts', 'prismaNamespaceBrowser.ts']) {
    const filePath = path.join(root, 'packages/db/src/generated', target, 'internal', file);
    const source = readFileSync(filePath, 'utf8')
      .replace(
        /^export const (DbNull|JsonNull|AnyNull) = (runtime\.objectEnumValues\.instances\.\w+)$/gm,
        'export const $1: typeof $2 = $2',
      )
      .replace(/^( {2}(?:DbNull|JsonNull|AnyNull)): (DbNull|JsonNull|AnyNull)(,?)$/gm, '$1: $2 as typeof $2$3');
    writeFileSync(filePath, source);
  }
}

/** Applies pending migrations with the runner production uses (no Prisma CLI); throws naming the one that failed. */
export async function migrate(target: Target, url: string): Promise<void> {
  await applyMigrations(target, url);
}
