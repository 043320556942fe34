// The selections behind zip download addresses: kept in Redis for as long as a signed address lives, so
// any gateway of the cluster can serve an address another one handed out. The address names a random
// id only; the files and who asked for them stay here.
import type { RedisClient } from '@pds/queue';
import type { Viewer } from './access';

export interface ArchiveSelection {
  instanceId: string;
  /** Who asked: the download reads only what this caller may still read. */
  viewer: Viewer;
  fileIds: string[];
}

export interface ArchiveSelections {
  save(id: string, selection: ArchiveSelection, ttlSeconds: number): Promise<void>;
  /** The selection, or null once it expired (or never was). */
  load(id: string): Promise<ArchiveSelection | null>;
}

export class RedisArchiveSelections implements ArchiveSelections {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async save(id: string, selection: ArchiveSelection, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.key(id), JSON.stringify(selection), 'EX', ttlSeconds);
  }

  async load(id: string): Promise<ArchiveSelection | null> {
    const text = await this.redis.get(this.key(id));
    return text === null ? null : (JSON.parse(text) as ArchiveSelection);
  }

  private key(id: string): string {
    return `${this.prefix}:archive:${id}`;
  }
}
