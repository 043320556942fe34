// Private Redis and PostgreSQL servers that a fault test may stop and start at will. The suite's shared
// services (and the machine's on 5432 / 6379) are never touched: each of these runs on its own port
// with its own data directory, and is removed by `destroy()`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from '../../scripts/lib/ports';

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
 * A PostgreSQL 15 cluster (Debian's binaries, run as the `postgres` user) with trust auth on loopback.
 * `stop` is an immediate shutdown (connections cut, as in a crash); `resume` starts it again on the same port.
 */
export class PrivatePostgres {
  private constructor(
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
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pds-fault-pg-'));
    if (process.getuid?.() === 0)
      chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
    const pg = new PrivatePostgres(await freePort(), dir);
    pg.asPostgres(`${PG_BIN}/initdb`, ['-D', pg.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await pg.resume();
    return pg;
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

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  private asPostgres(command: string, args: string[]): void {
    if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'ignore' });
    else execFileSync(command, args, { stdio: 'ignore' });
  }
}
