// A real S3 server for tests: the configured one when it answers, otherwise a private OpenStack Swift
// (Debian's python3-swift) with its s3api middleware, on free 127.0.0.1 ports, all state in one temp
// folder. Swift is used because it really checks SigV4 signatures and expiry (s3rver does not), and with
// keymaster + encryption it accepts `x-amz-server-side-encryption: AES256` and encrypts at rest.
// See the platform notes, §5.3.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';

export interface S3Server {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
  origin: 'configured' | 'started';
  stop(): Promise<void>;
}

export interface S3Settings {
  endpoint?: string;
  accessKey?: string;
  secretKey?: string;
  region?: string;
}

// Debian's swift is importable only by the system interpreter (pyenv shims may come first on PATH).
const PYTHON = '/usr/bin/python3';
export const SWIFT_INSTALL_HINT =
  'No S3 server is configured and OpenStack Swift is not installed: set TEST_S3_ENDPOINT (with TEST_S3_ACCESS_KEY, ' +
  'TEST_S3_SECRET_KEY), or run `apt-get install -y --no-install-recommends python3-swift`.';
const SWIFT_USER = { account: 'test', user: 'tester', key: 'testing' };
const SWIFT_REGION = 'us-east-1';
// The proxy comes last: its port is the endpoint.
const KINDS = ['account', 'container', 'object', 'proxy'] as const;
type Kind = (typeof KINDS)[number];

/** True when something answers HTTP at the endpoint (any status: S3 answers 403 to anonymous calls). */
export async function s3Answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(1500) });
    return true;
  } catch {
    return false;
  }
}

export async function ensureS3(options: { dataDir: string; configured?: S3Settings }): Promise<S3Server> {
  const c = options.configured;
  if (c?.endpoint && c.accessKey && c.secretKey && (await s3Answers(c.endpoint))) {
    return {
      endpoint: c.endpoint,
      accessKey: c.accessKey,
      secretKey: c.secretKey,
      region: c.region ?? SWIFT_REGION,
      origin: 'configured',
      stop: async () => undefined,
    };
  }
  return startSwift(options.dataDir);
}

// Builds the rings (one per kind: 2^8 partitions, one replica, one device), then runs the four Swift
// servers as green threads of one interpreter: the same apps and confs as four `run_wsgi` processes,
// but one Python start-up instead of four, which halves the time to healthy on a busy 2-core machine.
// A real thread started before Swift monkey-patches threading exits the process when stdin closes, so a
// crashed parent leaves no orphan.
const LAUNCHER = `
import os, sys, threading
def watch_parent():
    sys.stdin.buffer.read()
    os._exit(0)
threading.Thread(target=watch_parent, daemon=True).start()
root, kinds, ports = sys.argv[1], sys.argv[2].split(','), [int(p) for p in sys.argv[3].split(',')]
from swift.common.ring import RingBuilder
for kind, port in zip(kinds, ports):
    if kind == 'proxy':
        continue
    builder = RingBuilder(8, 1, 0)
    builder.add_dev({'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': port, 'device': 'sdb1', 'weight': 100})
    builder.rebalance()
    builder.get_ring().save('%s/%s.ring.gz' % (root, kind))
from swift.common.utils import set_swift_dir, eventlet_monkey_patch
set_swift_dir(root)
eventlet_monkey_patch()
import eventlet, eventlet.hubs
from swift.common import wsgi
# run_server installs Swift's hub; called again inside a green thread that would drop the running hub,
# so a thread keeps the first hub it gets (tpool threads still get their own).
eventlet.hubs.use_hub(wsgi.get_hub())
first_use_hub = eventlet.hubs.use_hub
def use_hub_once(*args, **kwargs):
    if not hasattr(eventlet.hubs._threadlocal, 'hub'):
        first_use_hub(*args, **kwargs)
eventlet.hubs.use_hub = use_hub_once
from swift.obj.server import global_conf_callback
servers = []
for kind in kinds:
    conf, logger, log_name = wsgi._initrp('%s/%s-server.conf' % (root, kind), kind + '-server', verbose=True)
    global_conf = {'log_name': log_name}
    if kind == 'object':
        global_conf_callback(conf, global_conf)
    servers.append(eventlet.spawn(wsgi.run_server, conf, logger, wsgi.get_socket(conf), global_conf=global_conf))
print('ready', flush=True)
for server in servers:
    server.wait()
`;

function serverConf(kind: Kind, port: number, root: string): string {
  const common = [
    '[DEFAULT]',
    `bind_ip = 127.0.0.1`,
    `bind_port = ${port}`,
    'workers = 0',
    `user = ${os.userInfo().username}`,
    `swift_dir = ${root}`,
    `devices = ${path.join(root, 'devices')}`,
    'mount_check = false',
    'log_level = WARNING',
    '',
  ];
  if (kind !== 'proxy') {
    return [...common, '[pipeline:main]', `pipeline = ${kind}-server`, '', `[app:${kind}-server]`, `use = egg:swift#${kind}`, ''].join(
      '\n',
    );
  }
  // [pipeline name, egg entry point] of the filters that need no settings.
  const filters = [
    ['catch_errors', 'catch_errors'],
    ['gatekeeper', 'gatekeeper'],
    ['healthcheck', 'healthcheck'],
    ['proxy-logging', 'proxy_logging'],
    ['cache', 'memcache'],
    ['listing_formats', 'listing_formats'],
    ['copy', 'copy'],
    ['slo', 'slo'],
    ['dlo', 'dlo'],
    ['encryption', 'encryption'],
  ];
  return [
    ...common,
    '[pipeline:main]',
    'pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo keymaster encryption proxy-logging proxy-server',
    '',
    '[app:proxy-server]',
    'use = egg:swift#proxy',
    'account_autocreate = true',
    '',
    ...filters.flatMap(([name, egg]) => [`[filter:${name}]`, `use = egg:swift#${egg}`, '']),
    '[filter:s3api]',
    'use = egg:swift#s3api',
    `location = ${SWIFT_REGION}`,
    '',
    '[filter:tempauth]',
    'use = egg:swift#tempauth',
    `user_${SWIFT_USER.account}_${SWIFT_USER.user} = ${SWIFT_USER.key} .admin`,
    '',
    '[filter:keymaster]',
    'use = egg:swift#keymaster',
    `encryption_root_secret = ${randomBytes(32).toString('base64')}`,
    '',
  ].join('\n');
}

async function startSwift(dataDir: string): Promise<S3Server> {
  // Checked by the launcher's first import instead of a separate (slow) Python start-up.
  if (!existsSync(PYTHON)) throw new Error(SWIFT_INSTALL_HINT);
  mkdirSync(dataDir, { recursive: true });
  const root = mkdtempSync(path.join(dataDir, 'swift-'));
  mkdirSync(path.join(root, 'devices', 'sdb1'), { recursive: true });
  writeFileSync(
    path.join(root, 'swift.conf'),
    `[swift-hash]\nswift_hash_path_suffix = ${randomBytes(8).toString('hex')}\nswift_hash_path_prefix = ${randomBytes(8).toString('hex')}\n\n` +
      '[storage-policy:0]\nname = Policy-0\ndefault = yes\n',
  );
  const ports: number[] = [];
  for (const kind of KINDS) {
    ports.push(await freePort());
    writeFileSync(path.join(root, `${kind}-server.conf`), serverConf(kind, ports.at(-1) as number, root));
  }

  const logFile = path.join(root, 'swift.log');
  const log = openSync(logFile, 'a');
  const child = spawn(PYTHON, ['-c', LAUNCHER, root, KINDS.join(','), ports.join(',')], { stdio: ['pipe', 'pipe', log] });
  closeSync(log);
  const stop = async () => {
    await stopChild(child);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('not ready after 30 s')), 30_000);
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`swift exited (${code})`));
      });
    });
    const endpoint = `http://127.0.0.1:${ports.at(-1)}`;
    const health = await fetch(`${endpoint}/healthcheck`);
    if (!health.ok) throw new Error(`swift healthcheck answered ${health.status}`);
    return {
      endpoint,
      accessKey: `${SWIFT_USER.account}:${SWIFT_USER.user}`,
      secretKey: SWIFT_USER.key,
      region: SWIFT_REGION,
      origin: 'started',
      stop,
    };
  } catch (error) {
    const logs = readFileSync(logFile, 'utf8').slice(-3000);
    await stop();
    if (/No module named '?swift/.test(logs)) throw new Error(SWIFT_INSTALL_HINT, { cause: error });
    throw new Error(`starting Swift failed: ${(error as Error).message}\n${logs}`, { cause: error });
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}
