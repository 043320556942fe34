// A Redis server for start-up and tests: the configured one, a local one on 6379, or a private
// `redis-server` (from PATH) started on a free port.
import { spawn, spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort, waitForPort } from './ports';

export interface RedisServer {
  url: string;
  origin: 'configured' | 'local' | 'started';
  /** The server's process, when this started it. */
  pid?: number;
  stop(): Promise<void>;
}

export async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 1500, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export const REDIS_INSTALL_HINT =
  'No Redis answers and no redis-server is on PATH: set REDIS_URL, or install one (Debian: apt-get install redis-server).';

export async function ensureRedis(configuredUrl?: string): Promise<RedisServer> {
  if (configuredUrl) {
    if (!(await redisAnswers(configuredUrl))) throw new Error(`Redis at ${configuredUrl} does not answer`);
    return { url: configuredUrl, origin: 'configured', stop: async () => undefined };
  }
  const local = 'redis://127.0.0.1:6379';
  if (await redisAnswers(local)) return { url: local, origin: 'local', stop: async () => undefined };
  if (spawnSync('redis-server', ['--version']).status !== 0) throw new Error(REDIS_INSTALL_HINT);
  return startRedisServer();
}

/** A private `redis-server` (from PATH) on a free port, without persistence, until stop(). */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  // In a session of its own, as embedded PostgreSQL (postgres.ts runPostgres): Ctrl-C in the terminal
  // must not stop it before the processes that use it.
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
    detached: true,
  });
  await waitForPort(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    origin: 'started',
    pid: child.pid,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
