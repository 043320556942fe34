// A command from a Debian package (nginx, wrk): found on PATH or in the sbin folders a non-root PATH
// leaves out, else installed with apt-get when running as root (as on CI and the project's machines).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

function find(command: string): string | undefined {
  const folders = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/sbin'].filter(Boolean);
  return folders.map((folder) => path.join(folder, command)).find((candidate) => existsSync(candidate));
}

/** The command's path; installs `pkg` first when the command is missing. */
export function ensureDebianCommand(command: string, pkg: string, log: (message: string) => void = () => undefined): string {
  const found = find(command);
  if (found) return found;
  if (process.getuid?.() !== 0) throw new Error(`${command} is missing: apt-get install -y --no-install-recommends ${pkg} (as root)`);
  log(`${command} is missing: apt-get install ${pkg}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Its output goes to stderr: stdout may carry what the caller prints (the bench's report).
  execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 2, 2], env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], { stdio: ['ignore', 2, 2], env });
  const installed = find(command);
  if (!installed) throw new Error(`${pkg} was installed but ${command} is still not found`);
  return installed;
}
