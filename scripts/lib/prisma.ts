// Runs the Prisma CLI for one of the two databases with the settings this platform needs (JS engine,
// no update checks, no lingering timers).
import { spawnSync } from 'node:child_process';
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
  return result.status ?? 1;
}

/** Applies pending migrations with the runner production uses (no Prisma CLI); throws naming the one that failed. */
export async function migrate(target: Target, url: string): Promise<void> {
  await applyMigrations(target, url);
}
