// The replicated S3 servers the storage suites also run on (issue 23): Swift with a 3-replica object
// ring over three object servers, and Ceph's RADOS Gateway over three OSDs. Each is a lazy service
// (lazy-services.ts): started for the first suite that asks, once per run.
import { cephMissing, cephObject, startCephRgw, type CephReplicas, type StartedCeph } from '../../scripts/lib/ceph';
import type { S3Settings } from '../../scripts/lib/s3';
import { startReplicatedSwift, swiftCopies, swiftMissing, type ReplicatedSwift, type SwiftReplicas } from '../../scripts/lib/swift';
import { lazyService, type LazyService, type Starters } from './lazy-services';

type Info = Required<S3Settings> & { replicas: SwiftReplicas | CephReplicas };

export interface ReplicatedS3 {
  name: string;
  settings: Required<S3Settings>;
  /** How many copies the servers hold of an object now, and the bytes of one as stored (encrypted). */
  stored(bucket: string, key: string): Promise<{ copies: number; bytes: Buffer }>;
  /** Kills one replica's process (the same one however often asked, by whichever suite). */
  stopOneReplica(): Promise<void>;
}

export const REPLICATED_S3 = [
  { name: 'swift, 3-replica ring', service: 'swift-3-replicas', missing: swiftMissing },
  { name: 'ceph rgw, 3 osds', service: 'ceph-rgw', missing: cephMissing },
] as const;

/** For global-setup.ts: how to start each service. */
export function replicatedS3Starters(dataDir: string): Starters {
  const lazy = async (starting: Promise<ReplicatedSwift | StartedCeph>): Promise<LazyService> => {
    const server = await starting;
    const { endpoint, accessKey, secretKey, region, replicas } = server;
    return {
      info: { endpoint, accessKey, secretKey, region, replicas } satisfies Info,
      actions: { 'stop-one-replica': server.stopOneReplica },
      memory: server.memory,
      stop: server.stop,
    };
  };
  return {
    'swift-3-replicas': () => lazy(startReplicatedSwift(dataDir)),
    'ceph-rgw': () => lazy(startCephRgw(dataDir)),
  };
}

/** The server of the run (started now unless a suite already asked for it). */
export async function replicatedS3(server: (typeof REPLICATED_S3)[number]): Promise<ReplicatedS3> {
  const { replicas, ...settings } = await lazyService<Info>(server.service);
  return {
    name: server.name,
    settings,
    stored: async (bucket, key) => {
      if (replicas.kind === 'ceph') {
        const object = await cephObject(replicas, key);
        return { copies: object.acting.length, bytes: object.stored };
      }
      const copies = swiftCopies(replicas, bucket, key).filter((copy) => copy !== null);
      return { copies: copies.length, bytes: copies[0] ?? Buffer.alloc(0) };
    },
    stopOneReplica: () => lazyService(server.service, 'stop-one-replica'),
  };
}
