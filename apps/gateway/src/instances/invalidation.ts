// Tells every gateway of the cluster to forget what it cached about an instance: its entry (key,
// address) or its accounts (disabled, deleted, app enabled). A change applies here at once and
// reaches the other gateways through Redis pub/sub within milliseconds. While the subscription is
// down, messages may be missed, so caches keep entries only FALLBACK_MAX_AGE_MS (see `maxAgeMs`),
// and everything cached is dropped when the subscription comes back.
//
// On a Redis Cluster the subscription lives on one node, which ioredis replaces by another when it
// dies without any close/ready event (a message in flight is lost). So there, a node leaving or
// joining (`-node`/`+node`) counts as a possible gap, and each gateway also sends itself an echo
// every ECHO_EVERY_MS: an echo overdue by ECHO_OVERDUE_MS means the subscription moved silently.
// Either way caches are emptied and the subscription renewed, so a change still takes effect on
// every gateway within a second through a failover.
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@pds/queue';
import type { Logger } from '@pds/runtime';

/** How long a cached entry may be trusted while invalidation messages cannot arrive. */
export const FALLBACK_MAX_AGE_MS = 1000;
/** On a cluster: how often a gateway checks its own subscription with an echo, and when an echo is late. */
export const ECHO_EVERY_MS = 200;
export const ECHO_OVERDUE_MS = 600;
/** A publish that failed (its node just died) is tried again for this long: the other gateways need it. */
const PUBLISH_RETRY_MS = 800;

export type InvalidationMessage = { kind: 'instance'; address: string } | { kind: 'accounts'; instanceId: string };

export interface InvalidationListener {
  /** One instance's entry or accounts changed somewhere in the cluster. */
  forget(message: InvalidationMessage): void;
  /** Messages may have been missed: drop everything. */
  forgetAll(): void;
}

export class Invalidation {
  private readonly listeners: InvalidationListener[] = [];
  /** Subscribed, and nothing missed since: caches may keep entries until told otherwise. */
  private live = false;
  /** This gateway's echo channel (cluster only), and when its last echo arrived. */
  private readonly echoChannel: string;
  private lastEcho = 0;

  /**
   * @param publisher the gateway's Redis connection
   * @param subscriber a connection of its own (a subscribed connection can do nothing else); none
   *   means no messages ever arrive, and caches always use the fallback age
   */
  constructor(
    private readonly publisher: RedisClient,
    private readonly subscriber: RedisClient | undefined,
    private readonly channel: string,
    private readonly logger: Logger,
  ) {
    this.echoChannel = `${channel}:echo:${randomUUID()}`;
    if (!subscriber) return;
    subscriber.on('message', (from: string, text: string) => {
      if (from === this.echoChannel) this.lastEcho = Date.now();
      if (from !== channel) return;
      const message = parse(text);
      if (message) for (const listener of this.listeners) listener.forget(message);
    });
    subscriber.on('close', () => {
      this.live = false;
    });
    subscriber.on('ready', () => void this.subscribe());
    if (subscriber.isCluster) this.watchCluster(subscriber);
    if (subscriber.status === 'ready') void this.subscribe();
  }

  private watchCluster(subscriber: RedisClient): void {
    subscriber.on('-node', () => this.resubscribe());
    subscriber.on('+node', () => this.resubscribe());
    const echo = setInterval(() => {
      if (this.live && Date.now() - this.lastEcho > ECHO_OVERDUE_MS) this.resubscribe();
      this.publisher.publish(this.echoChannel, '').catch(() => undefined);
    }, ECHO_EVERY_MS);
    echo.unref();
    subscriber.once('end', () => clearInterval(echo));
  }

  /** The subscription may have moved: stop trusting caches until it is renewed. */
  private resubscribe(): void {
    this.live = false;
    this.forgetAll();
    void this.subscribe();
  }

  /**
   * (Re)subscribes, then forgets everything: messages sent while the connection was down are lost.
   * Replies come in order, so this one also follows ioredis's own resubscription after a reconnect.
   */
  private async subscribe(): Promise<void> {
    try {
      await this.subscriber?.subscribe(this.channel, ...(this.subscriber.isCluster ? [this.echoChannel] : []));
      this.lastEcho = Date.now();
      this.forgetAll();
      this.live = true;
    } catch (error) {
      this.logger.warn({ err: error }, 'cache invalidation subscription failed');
    }
  }

  listen(listener: InvalidationListener): void {
    this.listeners.push(listener);
  }

  /** How long a cached entry may be used: unbounded while messages arrive, else the fallback age. */
  maxAgeMs(): number {
    return this.live && this.subscriber?.status === 'ready' ? Infinity : FALLBACK_MAX_AGE_MS;
  }

  /** Forgets here at once, then tells the other gateways; a Redis failure is logged, never thrown (the change is made). */
  async publish(message: InvalidationMessage): Promise<void> {
    for (const listener of this.listeners) listener.forget(message);
    const text = JSON.stringify(message);
    const giveUpAt = Date.now() + PUBLISH_RETRY_MS;
    for (;;) {
      try {
        await this.publisher.publish(this.channel, text);
        return;
      } catch (error) {
        // Worth another try only on a cluster that is still up (one node lost), never through an outage.
        if (!this.publisher.isCluster || this.publisher.status !== 'ready' || Date.now() >= giveUpAt) {
          this.logger.warn({ err: error, message }, 'cache invalidation not published; other gateways fall back to short cache lifetimes');
          return;
        }
        // A cluster node just died under the call: another one takes it once ioredis has dropped it.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  private forgetAll(): void {
    for (const listener of this.listeners) listener.forgetAll();
  }
}

function parse(text: string): InvalidationMessage | undefined {
  try {
    const message = JSON.parse(text) as Partial<InvalidationMessage>;
    if (message.kind === 'instance' && typeof message.address === 'string') return message as InvalidationMessage;
    if (message.kind === 'accounts' && typeof message.instanceId === 'string') return message as InvalidationMessage;
  } catch {
    // Not ours: ignore.
  }
  return undefined;
}
