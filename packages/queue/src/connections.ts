// Redis connections by the way they may wait, on one Redis server or a Redis Cluster. A request path
// must answer within a second while Redis is down (503, never a hang); a BullMQ worker or event
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

/** Longest a request waits on one Redis command before the call answers 503. */
export const REQUEST_COMMAND_TIMEOUT_MS = 500;

// Reconnect quickly after an outage: recovery should not wait for a long backoff.
const reconnectSoon = (attempt: number) => Math.min(attempt * 100, 1000);

/**
 * For request paths (rate limits, enqueueing): commands fail at once while disconnected instead of
 * queueing, and a command that gets no answer fails after REQUEST_COMMAND_TIMEOUT_MS. The connection
 * itself keeps reconnecting in the background, so calls succeed again as soon as Redis is back.
 */
export function requestRedis(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  const perCommand: RedisOptions = { commandTimeout: REQUEST_COMMAND_TIMEOUT_MS, connectTimeout: 1000, maxRetriesPerRequest: 1 };
  if ('url' in target) return new Redis(target.url, { enableOfflineQueue: false, retryStrategy: reconnectSoon, ...perCommand, ...options });
  return connectCluster(target, { enableOfflineQueue: false }, { ...perCommand, ...options });
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
