// The web console is a Vite build (apps/console/dist). `pnpm build` makes it; `pnpm start` and the
// test setup make it when there is none (a clean clone) or when its sources changed since.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const CONSOLE = path.resolve(__dirname, '../../apps/console');
const DIST = path.join(CONSOLE, 'dist');
const PAGES = ['index.html', 'signup.html', 'unknown.html', 'operator.html', 'dex.html'];
const SOURCES = ['src', ...PAGES, 'vite.config.mts', 'package.json'];

function newestChange(entry: string): number {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(entry).map((name) => newestChange(path.join(entry, name))));
}

function upToDate(): boolean {
  const built = PAGES.map((page) => path.join(DIST, page));
  if (!built.every((file) => existsSync(file))) return false;
  const builtAt = Math.min(...built.map((file) => statSync(file).mtimeMs));
  return SOURCES.every((source) => newestChange(path.join(CONSOLE, source)) <= builtAt);
}

export function ensureConsoleBuilt(log: (line: string) => void = () => undefined): void {
  if (upToDate()) return;
  log('building the web console (apps/console)…');
  execFileSync('pnpm', ['--filter', '@pds/console', 'exec', 'vite', 'build', '--logLevel', 'warn'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
