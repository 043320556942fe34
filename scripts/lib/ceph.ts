// A private Ceph cluster serving S3 through the RADOS Gateway (Debian's radosgw): one monitor, one
// manager, three OSDs keeping their objects in memory (memstore), pools of 3 replicas that take writes
// with 2 (min_size), rgw on its beast frontend. SSE-S3 uses rgw_crypt_default_encryption_key, which
// Ceph documents as a test-only setting. All state in one temp folder, the monitor and rgw on free
// ports (the OSDs and the manager pick their own from Ceph's 6800–7300). See the platform notes, §9.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { DaemonGroup, memoryOf } from './daemons';
import { freePort, waitForPort } from './ports';
import type { S3Server } from './s3';

const run = promisify(execFile);
// python3-rados (a dependency of these packages) is importable only by the system interpreter.
const PYTHON = '/usr/bin/python3';
const OSDS = 3;
const REGION = 'us-east-1';
/** The pool rgw keeps object data in (it creates its pools on first use). */
const DATA_POOL = 'default.rgw.buckets.data';
const BINARIES = ['radosgw', 'radosgw-admin', 'ceph-mon', 'ceph-osd', 'ceph-mgr', 'ceph-authtool', 'monmaptool'];

export const CEPH_INSTALL_HINT = 'apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd ceph-mgr';

/** Null when Ceph can run here, else which of its programs are missing. */
export function cephMissing(): string | null {
  const missing = BINARIES.filter((name) => !existsSync(`/usr/bin/${name}`));
  return missing.length === 0 ? null : `${missing.join(', ')} not installed (${CEPH_INSTALL_HINT})`;
}

/** Where the cluster keeps its objects: enough for a test to find and kill their holders. */
export interface CephReplicas {
  kind: 'ceph';
  conf: string;
}

export interface StartedCeph extends S3Server {
  replicas: CephReplicas;
  /** Kills (SIGKILL) OSD 0, once: its copies are lost (memstore), the other two serve. */
  stopOneReplica(): Promise<void>;
}

function cephConf(root: string, fsid: string, monPort: number, rgwPort: number, osdBytes: number): string {
  return `[global]
fsid = ${fsid}
mon host = [v2:127.0.0.1:${monPort}]
mon initial members = a
public addr = 127.0.0.1
ms bind msgr1 = false
# rgw's monitor client fails to authenticate (get_initial_auth_request returned -13) in secure mode.
ms mon client mode = crc
auth allow insecure global id reclaim = false
keyring = ${root}/keyring
run dir = ${root}/run
admin socket = ${root}/run/$name.asok
log file = ${root}/log/$name.log
mon data = ${root}/mon/$name
osd data = ${root}/osd/$id
# A test machine's disk is rarely 30 % free; no warning for that.
mon data avail warn = 1
osd objectstore = memstore
memstore device bytes = ${osdBytes}
osd pool default size = 3
osd pool default min size = 2
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
# All OSDs are on this host: replicas go to distinct OSDs, and each OSD's report that a peer died
# counts (by default only reports from distinct hosts do, so a killed OSD would stay "up" for 15 min).
osd crush chooseleaf type = 0
mon osd reporter subtree level = osd

[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw thread pool size = 32
rgw crypt default encryption key = ${randomBytes(32).toString('base64')}
rgw crypt require ssl = false
`;
}

// Every daemon's key in one keyring, imported by the monitor when it is created: no `ceph auth` calls.
const ENTITIES: [string, string[]][] = [
  ['mon.', ['mon', 'allow *']],
  ['client.admin', ['mon', 'allow *', 'osd', 'allow *', 'mgr', 'allow *', 'mds', 'allow *']],
  ['mgr.x', ['mon', 'allow profile mgr', 'osd', 'allow *', 'mds', 'allow *']],
  ...Array.from({ length: OSDS }, (_, i): [string, string[]] => [
    `osd.${i}`,
    ['mon', 'allow profile osd', 'mgr', 'allow profile osd', 'osd', 'allow *'],
  ]),
  ['client.rgw.a', ['mon', 'allow rw', 'osd', 'allow rwx']],
];

// One interpreter for the monitor commands (a `ceph` CLI call costs ~0.6 s of Python start-up each).
const RADOS = `
import json, sys, rados
conf, command = sys.argv[1], sys.argv[2]
cluster = rados.Rados(conffile=conf, name='client.admin')
cluster.connect(timeout=30)
def mon(cmd):
    ret, out, err = cluster.mon_command(json.dumps(cmd), b'')
    if ret != 0:
        raise SystemExit('%s: %s' % (cmd['prefix'], err))
    return json.loads(out) if out else None
if command == 'new-osds':
    for i in range(int(sys.argv[3])):
        mon({'prefix': 'osd new', 'uuid': sys.argv[4 + i], 'id': i, 'format': 'json'})
elif command == 'object':
    pool, suffix = sys.argv[3], sys.argv[4]
    io = cluster.open_ioctx(pool)
    name = next(o.key for o in io.list_objects() if o.key.endswith(suffix))
    data = io.read(name, 2 ** 30)
    acting = mon({'prefix': 'osd map', 'pool': pool, 'object': name, 'format': 'json'})['acting']
    print(json.dumps({'acting': acting, 'bytes': data.hex()}))
cluster.shutdown()
`;

/**
 * `osdBytes`: what each OSD holds (in memory: memstore), every object being on all three. Ceph stops
 * taking writes, without an error, when they are nearly full.
 */
export async function startCephRgw(dataDir: string, { osdBytes = 256 * 2 ** 20 } = {}): Promise<StartedCeph> {
  const missing = cephMissing();
  if (missing) throw new Error(`Ceph: ${missing}`);
  mkdirSync(dataDir, { recursive: true });
  const root = mkdtempSync(path.join(dataDir, 'ceph-'));
  for (const dir of ['run', 'log', 'mon', ...Array.from({ length: OSDS }, (_, i) => `osd/${i}`)])
    mkdirSync(path.join(root, dir), { recursive: true });
  const conf = path.join(root, 'ceph.conf');
  const monPort = await freePort();
  const rgwPort = await freePort();
  const fsid = randomUUID();
  writeFileSync(conf, cephConf(root, fsid, monPort, rgwPort, osdBytes));
  const daemons = new DaemonGroup(path.join(root, 'log'));
  const c = ['-c', conf];
  const stop = async () => {
    await daemons.stop();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const keyring = path.join(root, 'keyring');
    for (const [i, [name, caps]] of ENTITIES.entries()) {
      const capArgs = caps.flatMap((cap, j) => (j % 2 === 0 ? ['--cap', cap] : [cap]));
      await run('ceph-authtool', [...(i === 0 ? ['--create-keyring'] : []), keyring, '--gen-key', '-n', name, ...capArgs]);
    }
    const monmap = path.join(root, 'monmap');
    await run('monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', `[v2:127.0.0.1:${monPort}]`, monmap]);
    await run('ceph-mon', [...c, '--mkfs', '-i', 'a', '--monmap', monmap, '--keyring', keyring]);
    daemons.start('mon.a', 'ceph-mon', [...c, '-f', '-i', 'a']);
    await waitForPort(monPort, '127.0.0.1', 30_000);
    daemons.start('mgr.x', 'ceph-mgr', [...c, '-f', '-i', 'x']);

    const uuids = Array.from({ length: OSDS }, () => randomUUID());
    await run(PYTHON, ['-c', RADOS, conf, 'new-osds', String(OSDS), ...uuids]);
    await Promise.all(
      uuids.map(async (uuid, i) => {
        await run('ceph-osd', [...c, '--mkfs', '-i', String(i), '--osd-uuid', uuid]);
        daemons.start(`osd.${i}`, 'ceph-osd', [...c, '-f', '-i', String(i)]);
      }),
    );
    // rgw listens once it has created its pools, that is once the OSDs are up and their PGs active.
    daemons.start('rgw.a', 'radosgw', [...c, '-f', '-n', 'client.rgw.a']);
    await waitForPort(rgwPort, '127.0.0.1', 120_000);
    const accessKey = randomBytes(10).toString('hex').toUpperCase();
    const secretKey = randomBytes(20).toString('hex');
    await run('radosgw-admin', [
      ...c,
      'user',
      'create',
      '--uid=test',
      '--display-name=test',
      `--access-key=${accessKey}`,
      `--secret-key=${secretKey}`,
    ]);
    return {
      endpoint: `http://127.0.0.1:${rgwPort}`,
      accessKey,
      secretKey,
      region: REGION,
      origin: 'started',
      memory: () => memoryOf(daemons.pids()),
      stop,
      replicas: { kind: 'ceph', conf },
      stopOneReplica: () => daemons.kill('osd.0'),
    };
  } catch (error) {
    const logs = ['mon.a', 'osd.0', 'client.rgw.a']
      .map((name) => path.join(root, 'log', `${name}.log`))
      .filter((file) => existsSync(file))
      .map((file) => `${path.basename(file)}: ${readFileSync(file, 'utf8').slice(-1500)}`)
      .join('\n');
    await stop();
    throw new Error(`starting Ceph failed: ${(error as Error).message}\n${logs}`, { cause: error });
  }
}

export interface CephObject {
  /** The OSDs holding the object's placement group now (the acting set): one per copy. */
  acting: number[];
  /** The bytes RADOS holds for the object, as rgw wrote them. */
  stored: Buffer;
}

/** An object of a bucket as RADOS holds it (rgw names it `<bucket marker>_<key>`; keys of a test are unique). */
export async function cephObject(replicas: CephReplicas, key: string): Promise<CephObject> {
  const { stdout } = await run(PYTHON, ['-c', RADOS, replicas.conf, 'object', DATA_POOL, `_${key}`], { maxBuffer: 2 ** 30 });
  const found = JSON.parse(stdout) as { acting: number[]; bytes: string };
  return { acting: found.acting, stored: Buffer.from(found.bytes, 'hex') };
}
