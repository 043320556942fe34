// `postinstall`: generates the Prisma clients in a development install. A production install
// (`pnpm install --prod`) has no Prisma CLI or tsx and needs no clients (the built bundles carry
// them), so it skips instead of failing. Plain .mjs so it runs without tsx.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(path.join(root, 'node_modules/.bin/tsx')) || !existsSync(path.join(root, 'node_modules/.bin/prisma'))) {
  console.log('postinstall: no dev dependencies (production install); Prisma clients not generated');
  process.exit(0);
}
const result = spawnSync('pnpm', ['run', 'generate'], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
