// A real S3 server for tests: the configured one when it answers, otherwise a private OpenStack Swift
// (swift.ts). The replicated servers some suites also run on are in swift.ts and ceph.ts.
import type { Memory } from './daemons';
import { startSwift } from './swift';

export interface S3Server {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
  origin: 'configured' | 'started';
  /** Memory of the server's processes, when this process started them. */
  memory?(): Memory;
  stop(): Promise<void>;
}

export interface S3Settings {
  endpoint?: string;
  accessKey?: string;
  secretKey?: string;
  region?: string;
}

/** True when something answers HTTP at the endpoint (any status: S3 answers 403 to anonymous calls). */
export async function s3Answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(1500) });
    return true;
  } catch {
    return false;
  }
}

export async function ensureS3(options: { dataDir: string; configured?: S3Settings }): Promise<S3Server> {
  const c = options.configured;
  if (c?.endpoint && c.accessKey && c.secretKey && (await s3Answers(c.endpoint))) {
    return {
      endpoint: c.endpoint,
      accessKey: c.accessKey,
      secretKey: c.secretKey,
      region: c.region ?? 'us-east-1',
      origin: 'configured',
      stop: async () => undefined,
    };
  }
  return startSwift(options.dataDir);
}
