// Redis connections by the way they may wait, on one Redis server or a Redis Cluster. A request path
// must answer at once while Redis is down (503, never a hang), and wait a bounded while for one that
// is only slow (REQUEST_BUDGET_MS); a BullMQ worker or event
// listener blocks by design and must retry forever. Every process builds its connections here, so a
// deployment switches between one server (REDIS_URL) and a cluster (REDIS_CLUSTER_NODES) in one place.
import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';

/** A connection to one Redis server or to a Redis Cluster: both run the commands this project sends. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: one server's URL, or some of a cluster's nodes (`host:port`; the rest are discovered). */
export type RedisTarget = { url: string } | { clusterNodes: string[]; password?: string };

/** The target a process's configuration names; the configuration check guarantees exactly one is set. */
export function redisTarget(config: { REDIS_URL?: string; REDIS_CLUSTER_NODES?: string[]; REDIS_CLUSTER_PASSWORD?: string }): RedisTarget {
  if (config.REDIS_CLUSTER_NODES?.length) return { clusterNodes: config.REDIS_CLUSTER_NODES, password: config.REDIS_CLUSTER_PASSWORD };
  if (config.REDIS_URL) return { url: config.REDIS_URL };
  throw new Error('neither REDIS_URL nor REDIS_CLUSTER_NODES is set');
}

/**
 * Longest a request waits on Redis (one command, or one job queued in several) before it answers 503. A
 * Redis that answers slowly (a loaded machine: replies of 300 ms, a queue call of five of them) is waited
 * for within it; one that is down fails at once (the connection refuses commands while it reconnects).
 */
export const REQUEST_BUDGET_MS = 2000;

// Reconnect quickly after an outage: recovery should not wait for a long backoff.
const reconnectSoon = (attempt: number) => Math.min(attempt * 100, 1000);

/**
 * For request paths (rate limits, enqueueing): commands fail at once while disconnected instead of
 * queueing, and a command that gets no answer fails after REQUEST_BUDGET_MS. The connection itself
 * keeps reconnecting in the background, so calls succeed again as soon as Redis is back.
 */
export function requestRedis(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  const perCommand: RedisOptions = { commandTimeout: REQUEST_BUDGET_MS, connectTimeout: 1000, maxRetriesPerRequest: 1 };
  if ('url' in target) return new Redis(target.url, { enableOfflineQueue: false, retryStrategy: reconnectSoon, ...perCommand, ...options });
  return connectCluster(target, { enableOfflineQueue: false }, { ...perCommand, ...options });
}

/**
 * Ends a connection, then lets whatever was being set up on it see the end. Close the queues built on
 * it after this, never before: a BullMQ queue closed while its connection is still being set up stops
 * listening to it, and the setup, failing later, throws with nobody listening ("Stream isn't writeable
 * and enableOfflineQueue options is false", an error that ends the process): a start that fails early,
 * on a taken port, would die of it.
 */
export async function endConnection(client: RedisClient): Promise<void> {
  // What fails on a connection being ended (its ready check cut short) is nobody's news: without a
  // listener ioredis prints each such error with its stack.
  client.on('error', () => undefined);
  if (client.status !== 'end') {
    let timer: NodeJS.Timeout | undefined;
    const ended = new Promise<void>((resolve) => {
      client.once('end', () => resolve());
      // A connection that never reports its end must not hold a stop.
      timer = setTimeout(resolve, 1000);
    });
    client.disconnect();
    await ended;
    clearTimeout(timer);
  }
  // The setups fail in promise callbacks of the end: all of them have run before the loop's next turn.
  await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Whether a connection that lost Redis has it back before `deadline`: true once it is ready again, false
 * as soon as a new attempt fails (Redis is down, not passing), or at the deadline.
 */
export function backBefore(client: RedisClient, deadline: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (back: boolean) => {
      clearTimeout(timer);
      client.off('ready', ready).off('error', failed).off('end', failed);
      resolve(back);
    };
    const ready = () => done(true);
    const failed = () => done(false);
    const timer = setTimeout(failed, Math.max(0, deadline - Date.now()));
    client.once('ready', ready).once('error', failed).once('end', failed);
  });
}

/** For BullMQ workers and QueueEvents, which block on Redis: commands wait for the connection. */
export function blockingRedis(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  if ('url' in target) return new Redis(target.url, { maxRetriesPerRequest: null, retryStrategy: reconnectSoon, ...options });
  return connectCluster(target, {}, { maxRetriesPerRequest: null, ...options });
}

/**
 * A cluster client. The per-node options must not carry a retryStrategy: ioredis drops a lost node
 * (its `-node` event) and re-reads the slot map instead of reconnecting to it, which is how a
 * promoted replica is found after a failover. The cluster as a whole reconnects soon after an outage.
 */
function connectCluster(
  target: { clusterNodes: string[]; password?: string },
  clusterOptions: ClusterOptions,
  redisOptions: RedisOptions,
): Cluster {
  const { retryStrategy: _ignored, ...perNode } = redisOptions;
  return new Cluster(target.clusterNodes.map(clusterNode), {
    clusterRetryStrategy: reconnectSoon,
    // A failover takes the cluster ≈ 2 s: commands to the moving slots are retried meanwhile, each
    // still bounded by the caller's own timeout.
    retryDelayOnClusterDown: 200,
    retryDelayOnFailover: 200,
    ...clusterOptions,
    redisOptions: { password: target.password, ...perNode },
  });
}

function clusterNode(address: string): ClusterNode {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
}

/**
 * BullMQ's key prefix on this connection. A cluster runs BullMQ's multi-key scripts only when all of
 * a queue's keys share one slot: the prefix becomes a hash tag (`{pds}`), which puts every queue on
 * one master. Per-queue tags would not spread them well (measured on three masters with the slots
 * split evenly: of the nine queue names six hash to one master, three to another, none to the third,
 * and the busy ones, thumbnail and app-push, to the same), and would rename queues that
 * single-server deployments already hold.
 */
export function queueKeyPrefix(connection: RedisClient, prefix: string): string {
  return connection.isCluster ? `{${prefix}}` : prefix;
}
