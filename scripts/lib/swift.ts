// A private OpenStack Swift (Debian's python3-swift) with its s3api middleware, on free 127.0.0.1 ports,
// all state in one temp folder. Swift really checks SigV4 signatures and expiry (s3rver does not), and
// with keymaster + encryption it accepts `x-amz-server-side-encryption: AES256` and encrypts at rest.
// One object server by default; three behind a 3-replica object ring for the replicated runs, each in
// its own process so that one can be killed while the others serve. See the platform notes, §5.3 and §9.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';
import { memoryOf, stopChild } from './daemons';
import type { S3Server } from './s3';

// Debian's swift is importable only by the system interpreter (pyenv shims may come first on PATH).
const PYTHON = '/usr/bin/python3';
const SWIFT_INSTALL_HINT =
  'No S3 server is configured and OpenStack Swift is not installed: set TEST_S3_ENDPOINT (with TEST_S3_ACCESS_KEY, ' +
  'TEST_S3_SECRET_KEY), or run `apt-get install -y --no-install-recommends python3-swift`.';
const S3API = '/usr/lib/python3/dist-packages/swift/common/middleware/s3api';
const SWIFT_USER = { account: 'test', user: 'tester', key: 'testing' };
const SWIFT_REGION = 'us-east-1';
// tempauth's account for SWIFT_USER: s3api maps a bucket to a container of it.
const ACCOUNT = `AUTH_${SWIFT_USER.account}`;
const PART_POWER = 8;

/** Null when Swift can run here, else why not. */
export function swiftMissing(): string | null {
  return existsSync(PYTHON) && existsSync(S3API)
    ? null
    : 'python3-swift is not installed (apt-get install -y --no-install-recommends python3-swift)';
}

/** Where a replicated Swift keeps its objects: enough for a test to find and kill their holders. */
export interface SwiftReplicas {
  kind: 'swift';
  root: string;
  /** How many object servers (`<root>/object-<i>`). */
  servers: number;
}

/** Swift with three object servers behind a 3-replica object ring. */
export interface ReplicatedSwift extends S3Server {
  replicas: SwiftReplicas;
  /** Kills (SIGKILL) the first object server, once; its copies stay on its disk, unserved. */
  stopOneReplica(): Promise<void>;
}

// Builds the rings the process is given (only the proxy's process is), then runs the servers named on
// the command line as green threads of one interpreter: the same apps and confs as separate `run_wsgi`
// processes, but one Python start-up, which halves the time to healthy on a busy 2-core machine.
// A real thread started before Swift monkey-patches threading exits the process when stdin closes, so a
// crashed parent leaves no orphan.
const LAUNCHER = `
import json, os, sys, threading
def watch_parent():
    sys.stdin.buffer.read()
    os._exit(0)
threading.Thread(target=watch_parent, daemon=True).start()
root, names, rings = sys.argv[1], sys.argv[2].split(','), json.loads(sys.argv[3])
from swift.common.ring import RingBuilder
for ring in rings:
    builder = RingBuilder(${PART_POWER}, len(ring['ports']), 0)
    for port in ring['ports']:
        builder.add_dev({'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': port, 'device': 'sdb', 'weight': 100})
    builder.rebalance()
    builder.get_ring().save('%s/%s.ring.gz' % (root, ring['kind']))
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
for name in names:
    kind = name.split('-')[0]
    conf, logger, log_name = wsgi._initrp('%s/%s.conf' % (root, name), kind + '-server', verbose=True)
    global_conf = {'log_name': log_name}
    if kind == 'object':
        global_conf_callback(conf, global_conf)
    servers.append(eventlet.spawn(wsgi.run_server, conf, logger, wsgi.get_socket(conf), global_conf=global_conf))
print('ready', flush=True)
for server in servers:
    server.wait()
`;

/** One server: its conf file (`<name>.conf`), kind, port and (but for the proxy) device folder `<root>/<name>/sdb`. */
interface Server {
  name: string;
  kind: 'account' | 'container' | 'object' | 'proxy';
  port: number;
}

function serverConf(server: Server, root: string): string {
  const common = [
    '[DEFAULT]',
    `bind_ip = 127.0.0.1`,
    `bind_port = ${server.port}`,
    'workers = 0',
    `user = ${os.userInfo().username}`,
    `swift_dir = ${root}`,
    `devices = ${path.join(root, server.name)}`,
    'mount_check = false',
    'log_level = WARNING',
    '',
  ];
  const { kind } = server;
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

/** Runs the launcher for some of the servers; `ready` resolves once they listen. */
function launch(root: string, servers: Server[], rings: { kind: string; ports: number[] }[], log: string) {
  const out = openSync(log, 'a');
  const child = spawn(PYTHON, ['-c', LAUNCHER, root, servers.map((s) => s.name).join(','), JSON.stringify(rings)], {
    stdio: ['pipe', 'pipe', out],
  });
  closeSync(out);
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('not ready after 60 s')), 60_000);
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
  return { child, ready };
}

/** Swift with one object server: account, container, object and proxy servers in one process. */
export async function startSwift(dataDir: string): Promise<S3Server> {
  return (await launchSwift(dataDir, 1)).server;
}

/** Swift with three object servers, each in a process of its own, behind a 3-replica object ring. */
export async function startReplicatedSwift(dataDir: string): Promise<ReplicatedSwift> {
  const { server, root, children } = await launchSwift(dataDir, 3);
  const objectServers = children.slice(1);
  return {
    ...server,
    replicas: { kind: 'swift', root, servers: objectServers.length },
    stopOneReplica: () => stopChild(objectServers[0] as ChildProcess, 'SIGKILL'),
  };
}

async function launchSwift(dataDir: string, objectServers: number): Promise<{ server: S3Server; root: string; children: ChildProcess[] }> {
  // Checked by the launcher's first import instead of a separate (slow) Python start-up.
  if (!existsSync(PYTHON)) throw new Error(SWIFT_INSTALL_HINT);
  mkdirSync(dataDir, { recursive: true });
  const root = mkdtempSync(path.join(dataDir, 'swift-'));
  writeFileSync(
    path.join(root, 'swift.conf'),
    `[swift-hash]\nswift_hash_path_suffix = ${randomBytes(8).toString('hex')}\nswift_hash_path_prefix = ${randomBytes(8).toString('hex')}\n\n` +
      '[storage-policy:0]\nname = Policy-0\ndefault = yes\n',
  );
  const server = async (name: string, kind: Server['kind']): Promise<Server> => ({ name, kind, port: await freePort() });
  const shared = [await server('account', 'account'), await server('container', 'container')];
  const objects: Server[] = [];
  for (let i = 0; i < objectServers; i++) objects.push(await server(`object-${i}`, 'object'));
  // The proxy comes last: its port is the endpoint.
  const proxy = await server('proxy', 'proxy');
  for (const s of [...shared, ...objects, proxy]) {
    writeFileSync(path.join(root, `${s.name}.conf`), serverConf(s, root));
    if (s.kind !== 'proxy') mkdirSync(path.join(root, s.name, 'sdb'), { recursive: true });
  }
  const rings = [...shared.map((s) => ({ kind: s.kind, ports: [s.port] })), { kind: 'object', ports: objects.map((o) => o.port) }];
  const groups = objectServers === 1 ? [[...shared, ...objects, proxy]] : [[...shared, proxy], ...objects.map((o) => [o])];

  const logFile = path.join(root, 'swift.log');
  const launched = groups.map((group, i) => launch(root, group, i === 0 ? rings : [], logFile));
  const children = launched.map((l) => l.child);
  const stop = async () => {
    await Promise.all(children.map((child) => stopChild(child)));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await Promise.all(launched.map((l) => l.ready));
    const endpoint = `http://127.0.0.1:${proxy.port}`;
    const health = await fetch(`${endpoint}/healthcheck`);
    if (!health.ok) throw new Error(`swift healthcheck answered ${health.status}`);
    const pids = children.map((child) => child.pid as number);
    const server: S3Server = {
      endpoint,
      accessKey: `${SWIFT_USER.account}:${SWIFT_USER.user}`,
      secretKey: SWIFT_USER.key,
      region: SWIFT_REGION,
      origin: 'started',
      memory: () => memoryOf(pids),
      stop,
    };
    return { server, root, children };
  } catch (error) {
    const logs = readFileSync(logFile, 'utf8').slice(-3000);
    await stop();
    if (/No module named '?swift/.test(logs)) throw new Error(SWIFT_INSTALL_HINT, { cause: error });
    throw new Error(`starting Swift failed: ${(error as Error).message}\n${logs}`, { cause: error });
  }
}

/**
 * The stored file (`.data`, as Swift encrypted it) of an object on each object server, in ring order;
 * null where a server holds none. Swift keeps an object under `objects/<partition>/<last 3 hex>/<hash>/`,
 * where hash is the MD5 of the hash-path prefix, `/<account>/<container>/<object>` and the suffix, and
 * partition is its top PART_POWER bits; a PUT removes the older `.data` of the same object.
 */
export function swiftCopies(replicas: SwiftReplicas, bucket: string, key: string): (Buffer | null)[] {
  const conf = readFileSync(path.join(replicas.root, 'swift.conf'), 'utf8');
  const setting = (name: string) => new RegExp(`${name} = (\\w+)`).exec(conf)?.[1] ?? '';
  const hash = createHash('md5')
    .update(`${setting('swift_hash_path_prefix')}/${ACCOUNT}/${bucket}/${key}${setting('swift_hash_path_suffix')}`)
    .digest();
  const partition = hash.readUInt32BE(0) >>> (32 - PART_POWER);
  const hex = hash.toString('hex');
  return Array.from({ length: replicas.servers }, (_, i) => {
    const dir = path.join(replicas.root, `object-${i}`, 'sdb', 'objects', String(partition), hex.slice(-3), hex);
    const data = existsSync(dir) ? readdirSync(dir).find((name) => name.endsWith('.data')) : undefined;
    return data ? readFileSync(path.join(dir, data)) : null;
  });
}
