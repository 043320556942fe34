// Private Redis and PostgreSQL servers that a fault test may stop and start at will, and streaming
// replicas of such a PostgreSQL. The suite's shared services (and the machine's on 5432 / 6379) are
// never touched: each of these runs on its own port with its own data directory, and is removed by
// `destroy()`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, waitForPort } from '../../scripts/lib/ports';
import { eventually } from './eventually';

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** A redis-server on a fixed port; `stop` kills it (no persistence: data is lost, as in a crash). */
export class PrivateRedis {
  private child: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.resume();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server again; a no-op while it runs (a second server would fail to bind and the first would be orphaned). */
  async resume(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) return;
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await waitForPort(this.port);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * A Redis Cluster of `redis-server`s (Debian's, 7.0): three masters with a replica each, every node on
 * OS-chosen ports (its own and its cluster bus port), with its nodes.conf in a folder of its own. A node
 * killed with `kill` is failed over by the others (node timeout 2 s); `restart` brings it back, and it
 * rejoins as a replica of whichever node took its slots. `stop`/`resume` do that to every node (a whole
 * outage: no persistence, the data is gone as with PrivateRedis).
 */
export class PrivateRedisCluster {
  private readonly children = new Map<number, ChildProcess>();

  private constructor(
    private readonly dir: string,
    private readonly ports: Array<{ port: number; bus: number }>,
  ) {}

  static async start(size = 6): Promise<PrivateRedisCluster> {
    // The OS picks each port and lets it go before redis-server binds it, so another process (an outgoing
    // connection's local port) may take one in between: a node that cannot bind means new ports.
    for (let attempt = 1; ; attempt++) {
      const ports = [];
      for (let i = 0; i < size; i++) ports.push({ port: await freePort(), bus: await freePort() });
      const cluster = new PrivateRedisCluster(mkdtempSync(path.join(os.tmpdir(), 'pds-redis-cluster-')), ports);
      try {
        await cluster.resume();
      } catch (error) {
        await cluster.destroy();
        if (attempt >= 3) throw error;
        continue;
      }
      execFileSync('redis-cli', ['--cluster', 'create', ...cluster.addresses, '--cluster-replicas', '1', '--cluster-yes'], {
        stdio: 'ignore',
      });
      await cluster.settled();
      return cluster;
    }
  }

  /** Every node as host:port (what REDIS_CLUSTER_NODES takes). */
  get addresses(): string[] {
    return this.ports.map(({ port }) => `127.0.0.1:${port}`);
  }

  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): number {
    const anyNode = this.ports.find(({ port }) => this.running(port)) as { port: number };
    const slot = Number(this.cli(anyNode.port, 'cluster', 'keyslot', key));
    for (const line of this.cli(anyNode.port, 'cluster', 'nodes').split('\n')) {
      const [, address, flags, , , , , state, ...ranges] = line.split(' ');
      if (!flags?.includes('master') || flags.includes('fail') || state !== 'connected') continue;
      for (const range of ranges) {
        const [from, to = from] = range.split('-').map(Number);
        if (slot >= (from as number) && slot <= (to as number)) return Number(address?.split(/[:@]/)[1]);
      }
    }
    throw new Error(`no master serves slot ${slot}`);
  }

  /** The port of a node holding a client's pub/sub subscription (ioredis names that connection). */
  subscribedNode(): number {
    const node = this.ports.find(({ port }) => this.running(port) && this.cli(port, 'client', 'list').includes('(subscriber)'));
    if (!node) throw new Error('no node holds a subscription');
    return node.port;
  }

  /** kill -9 of one node. */
  async kill(port: number): Promise<void> {
    const child = this.children.get(port);
    this.children.delete(port);
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Starts a killed node again with its nodes.conf: it rejoins the cluster. */
  async restart(port: number): Promise<void> {
    if (this.running(port)) return;
    const bus = (this.ports.find((p) => p.port === port) as { bus: number }).bus;
    const child = spawn(
      'redis-server',
      [
        ...['--port', String(port), '--cluster-port', String(bus), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        ...[
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          path.join(this.dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '2000',
        ],
        ...['--dir', this.dir],
      ],
      { stdio: 'ignore' },
    );
    this.children.set(port, child);
    // A node that exits before it listens (its port taken) is reported at once, not after the wait.
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`redis-server on port ${port} exited (${code}) before listening`))),
    );
    exited.catch(() => undefined); // exiting later, when killed, is expected
    await Promise.race([waitForPort(port), exited]);
  }

  /** Resolves once every running node sees the cluster as ok, with every slot served and every replica in sync. */
  async settled(timeoutMs = 20_000): Promise<void> {
    await eventually(
      async () =>
        this.ports
          .filter(({ port }) => this.running(port))
          .every(({ port }) => {
            try {
              const info = this.cli(port, 'cluster', 'info');
              // A replica that never synced with its master would not be allowed to replace it.
              const replication = this.cli(port, 'info', 'replication');
              const synced = replication.includes('role:master') || replication.includes('master_link_status:up');
              return info.includes('cluster_state:ok') && info.includes('cluster_slots_ok:16384') && synced;
            } catch {
              return false; // still starting
            }
          }),
      timeoutMs,
    );
  }

  async stop(): Promise<void> {
    for (const { port } of this.ports) await this.kill(port);
  }

  async resume(): Promise<void> {
    for (const { port } of this.ports) await this.restart(port);
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private running(port: number): boolean {
    const child = this.children.get(port);
    return !!child && child.exitCode === null && child.signalCode === null;
  }

  private cli(port: number, ...args: string[]): string {
    return execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).trim();
  }
}

/** A private Redis a suite may take down, either kind: what its processes are given, and its outage. */
export interface RedisUnderTest {
  /** REDIS_URL or REDIS_CLUSTER_NODES. */
  env: Record<string, string>;
  stop(): Promise<void>;
  /** Back, and answering every key. */
  resume(): Promise<void>;
  destroy(): Promise<void>;
}

/** The suites that run on both kinds of Redis: one server (the default deployment) and a cluster. */
export const REDIS_KINDS = {
  'one Redis server': async (): Promise<RedisUnderTest> => {
    const redis = await PrivateRedis.start();
    return { env: { REDIS_URL: redis.url }, stop: () => redis.stop(), resume: () => redis.resume(), destroy: () => redis.stop() };
  },
  'a Redis Cluster': async (): Promise<RedisUnderTest> => {
    const cluster = await PrivateRedisCluster.start();
    return {
      env: { REDIS_CLUSTER_NODES: cluster.addresses.join(',') },
      stop: () => cluster.stop(),
      resume: async () => {
        await cluster.resume();
        await cluster.settled();
      },
      destroy: () => cluster.destroy(),
    };
  },
};

/**
 * A PostgreSQL 15 cluster (Debian's binaries, run as the `postgres` user) with trust auth on loopback.
 * `stop` is an immediate shutdown (connections cut, as in a crash); `resume` starts it again on the same port.
 */
export class PrivatePostgres {
  protected constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static available(): boolean {
    try {
      execFileSync(`${PG_BIN}/pg_ctl`, ['--version'], { stdio: 'ignore' });
      execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  static async start(): Promise<PrivatePostgres> {
    const server = new PrivatePostgres(await freePort(), PrivatePostgres.makeDir());
    server.asPostgres(`${PG_BIN}/initdb`, ['-D', server.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await server.resume();
    return server;
  }

  /** A folder the server's user owns. */
  protected static makeDir(): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pds-fault-pg-'));
    if (process.getuid?.() === 0)
      chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
    return dir;
  }

  /** The first row of a query on `database` over a connection of its own. */
  async queryOne<T>(sql: string, params: unknown[] = [], database = 'postgres'): Promise<T | undefined> {
    const client = new pg.Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows[0] as T | undefined;
    } finally {
      await client.end();
    }
  }

  get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async resume(): Promise<void> {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c fsync=off`;
    this.asPostgres(`${PG_BIN}/pg_ctl`, ['-D', this.dataDir, '-o', options, '-l', path.join(this.dir, 'log'), '-w', 'start']);
    await waitForPort(this.port);
  }

  async stop(): Promise<void> {
    this.asPostgres(`${PG_BIN}/pg_ctl`, ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    try {
      await this.stop();
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  protected get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  protected asPostgres(command: string, args: string[]): void {
    if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'ignore' });
    else execFileSync(command, args, { stdio: 'ignore' });
  }
}

/**
 * A hot standby of a PrivatePostgres, streaming through a replication slot of its own:
 * `pg_basebackup -R -X stream -C -S <slot>` of the primary (an immediate checkpoint: the default spread one took 100 s), started on a second port. Writes to it fail
 * (read-only); `pauseReplay` holds back what it has received, so a test can show which reads must not
 * go to it.
 */
export class PostgresReplica extends PrivatePostgres {
  private constructor(
    port: number,
    dir: string,
    readonly primary: PrivatePostgres,
    readonly slot: string,
  ) {
    super(port, dir);
  }

  static async of(primary: PrivatePostgres, slot: string): Promise<PostgresReplica> {
    const replica = new PostgresReplica(await freePort(), PrivatePostgres.makeDir(), primary, slot);
    const source = ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'];
    replica.asPostgres(`${PG_BIN}/pg_basebackup`, [
      ...source,
      '-D',
      replica.dataDir,
      '-R',
      '-X',
      'stream',
      '-C',
      '-S',
      slot,
      '--no-sync',
      '--checkpoint=fast',
    ]);
    await replica.resume();
    return replica;
  }

  /** Stops applying the WAL it receives; resolves once replay is paused. */
  async pauseReplay(): Promise<void> {
    await this.queryOne('SELECT pg_wal_replay_pause()');
    await eventually(
      async () => (await this.queryOne<{ state: string }>('SELECT pg_get_wal_replay_pause_state() AS state'))?.state === 'paused',
    );
  }

  async resumeReplay(): Promise<void> {
    await this.queryOne('SELECT pg_wal_replay_resume()');
  }

  /** Resolves once the replica has received (`replay`: also applied) all the WAL the primary has written so far. */
  async caughtUp(what: 'receive' | 'replay' = 'replay'): Promise<void> {
    const target = (await this.primary.queryOne<{ lsn: string }>('SELECT pg_current_wal_lsn() AS lsn'))?.lsn;
    const behind =
      what === 'receive'
        ? 'SELECT pg_last_wal_receive_lsn() < $1::pg_lsn AS behind'
        : 'SELECT pg_last_wal_replay_lsn() < $1::pg_lsn AS behind';
    await eventually(async () => (await this.queryOne<{ behind: boolean }>(behind, [target]))?.behind === false);
  }

  /** Removes the replica and then its slot, which would otherwise keep WAL on the primary for ever. */
  override async destroy(): Promise<void> {
    await super.destroy();
    // The primary's walsender lets go of the slot a moment after the replica stops.
    await eventually(async () => {
      const slot = await this.primary.queryOne<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [
        this.slot,
      ]);
      if (slot?.active) return false;
      if (slot) await this.primary.queryOne('SELECT pg_drop_replication_slot($1)', [this.slot]);
      return true;
    }).catch(() => undefined); // the primary is down or gone: so is its slot's WAL
  }
}
