// Who listens on a TCP port, as Linux tells it (/proc): for the one line a start on a taken port prints.
// Elsewhere, or without the right to read another user's processes, nothing is learned.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const LISTEN = '0A';
/** Longer command lines are cut: the line names the holder, it does not reproduce it. */
const MAX_COMMAND = 80;

/** The sockets (inodes) listening on `port` over IPv4 or IPv6. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (!local || fields[3] !== LISTEN) continue;
      if (parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && fields[9]) inodes.add(fields[9]);
    }
  }
  return inodes;
}

/** `pid 1234 (redis-server 127.0.0.1:8080)` for the process that listens on `port`, or undefined. */
export function portHolder(port: number): string | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return `pid ${pid} (${commandOf(pid)})`;
    }
  }
  return undefined;
}

function commandOf(pid: string): string {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return command.length > MAX_COMMAND ? `${command.slice(0, MAX_COMMAND - 1)}…` : command || '?';
  } catch {
    return '?';
  }
}
