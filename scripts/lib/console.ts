// The web console is a Vite build (apps/console/dist). `pnpm build` makes it; `pnpm start` and the
// test setup make it when a clean clone has none, so the gateway always has a console to serve.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { consoleDist } from '@pds/console';

export function ensureConsoleBuilt(log: (line: string) => void = () => undefined): void {
  if (existsSync(path.join(consoleDist, 'index.html')) && existsSync(path.join(consoleDist, 'signup.html'))) return;
  log('building the web console (apps/console)…');
  execFileSync('pnpm', ['--filter', '@pds/console', 'exec', 'vite', 'build', '--logLevel', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
}
