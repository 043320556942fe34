// `pnpm install --prod --frozen-lockfile` in a clean copy of the repository: it must succeed (the
// postinstall no longer needs dev tools) and leave tsx, TypeScript and jest out.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'pds-prod-install-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root })
    .toString()
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    if (!existsSync(path.join(root, file))) continue;
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(path.join(root, file), path.join(dir, file));
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('installs for production from the lockfile without dev tools', () => {
  // --offline: the packages come from the store this checkout was installed from.
  const result = spawnSync('pnpm', ['install', '--prod', '--frozen-lockfile', '--offline'], { cwd: dir, encoding: 'utf8' });
  expect({ status: result.status, stderr: result.stderr.slice(-2000) }).toEqual({ status: 0, stderr: expect.any(String) });
  const installed = readdirSync(path.join(dir, 'node_modules/.pnpm'));
  expect(installed.filter((name) => /^(tsx|typescript|jest|prisma)@/.test(name))).toEqual([]);
  expect(installed).toEqual(expect.arrayContaining([expect.stringMatching(/^pg@/)]));
}, 60_000);
