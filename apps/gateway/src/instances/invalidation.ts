// Tells every gateway of the cluster to forget what it cached about an instance: its entry (key,
// address) or its accounts (disabled, deleted, app enabled). A change applies here at once and
// reaches the other gateways through Redis pub/sub within milliseconds. While the subscription is
// down, messages may be missed, so caches keep entries only FALLBACK_MAX_AGE_MS (see `maxAgeMs`),
// and everything cached is dropped when the subscription comes back.
import type { Redis } from 'ioredis';
import type { Logger } from '@pds/runtime';

/** How long a cached entry may be trusted while invalidation messages cannot arrive. */
export const FALLBACK_MAX_AGE_MS = 1000;

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

  /**
   * @param publisher the gateway's Redis connection
   * @param subscriber a connection of its own (a subscribed connection can do nothing else); none
   *   means no messages ever arrive, and caches always use the fallback age
   */
  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis | undefined,
    private readonly channel: string,
    private readonly logger: Logger,
  ) {
    if (!subscriber) return;
    subscriber.on('message', (from: string, text: string) => {
      if (from !== channel) return;
      const message = parse(text);
      if (message) for (const listener of this.listeners) listener.forget(message);
    });
    subscriber.on('close', () => {
      this.live = false;
    });
    subscriber.on('ready', () => void this.subscribe());
    if (subscriber.status === 'ready') void this.subscribe();
  }

  /**
   * (Re)subscribes, then forgets everything: messages sent while the connection was down are lost.
   * Replies come in order, so this one also follows ioredis's own resubscription after a reconnect.
   */
  private async subscribe(): Promise<void> {
    try {
      await this.subscriber?.subscribe(this.channel);
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
    try {
      await this.publisher.publish(this.channel, JSON.stringify(message));
    } catch (error) {
      this.logger.warn({ err: error, message }, 'cache invalidation not published; other gateways fall back to short cache lifetimes');
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
