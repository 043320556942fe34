// The product as `pnpm start` runs it (scripts/start.ts in a child process), on free ports, with its
// own DATA_DIR, queue prefix and databases copied from the test run's migrated templates.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../../../scripts/lib/ports';
import { requireEnv } from '../../../../test/support/gateway';
import { createDatabaseFrom } from '../../../../test/support/templates';

const REPO = path.resolve(__dirname, '../../../..');
export const CLUSTER = 'pds.localhost';

export interface Product {
  port: number;
  dexUrl: string;
  adminPassword: string;
  /** http://<name>.pds.localhost:<port> */
  instanceUrl(name: string): string;
  clusterUrl: string;
  /** Its gateway database, its DATA_DIR and its MASTER_KEY: for tests that seed what no API makes quickly. */
  databaseUrl: string;
  dataDir: string;
  masterKey: Buffer;
  /** Dex's database, for a test that changes what dex trusts as its CLI would (pnpm dex certify). */
  dexDatabaseUrl: string;
  /** The admin listener (ADMIN_PORT), when the test asked for one. */
  adminUrl?: string;
  stop(): Promise<void>;
}

function waitForStart(child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pnpm start did not come up in ${timeoutMs} ms:\n${output()}`)), timeoutMs);
    const check = () => {
      if (output().includes('PDS cluster running')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`pnpm start exited with ${code}:\n${output()}`));
    });
  });
}

/**
 * `env`: settings beyond the test's own, e.g. SMTP_URL of a mailbox the test reads. `gateways`: where the
 * instances of other clusters are reached (CLUSTER_GATEWAYS beside this cluster's own gateway).
 */
export async function startProduct(env: Record<string, string> = {}, gateways: Record<string, string> = {}): Promise<Product> {
  const adminUrl = requireEnv('TEST_PG_ADMIN_URL');
  const gatewayDb = await createDatabaseFrom(adminUrl, requireEnv('TEST_GATEWAY_TEMPLATE'));
  const dexDb = await createDatabaseFrom(adminUrl, requireEnv('TEST_DEX_TEMPLATE'));
  const [port, dexPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pds-browser-'));
  const adminPassword = randomBytes(18).toString('base64url');
  const masterKey = randomBytes(32);
  const child = spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', 'scripts/start.ts'], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      DEX_PORT: String(dexPort),
      DATA_DIR: dataDir,
      QUEUE_PREFIX: `browser-${randomBytes(4).toString('hex')}`,
      DATABASE_URL: gatewayDb.url,
      DEX_DATABASE_URL: dexDb.url,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      ADMIN_PASSWORD: adminPassword,
      MASTER_KEY: masterKey.toString('hex'),
      LOG_LEVEL: 'warn',
      CLUSTER_GATEWAYS: Object.entries({ [CLUSTER]: `http://127.0.0.1:${port}`, ...gateways })
        .map(([domain, url]) => `${domain}=${url}`)
        .join(','),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitForStart(child, () => output, 60_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }

  return {
    port,
    dexUrl: `http://127.0.0.1:${dexPort}`,
    adminPassword,
    clusterUrl: `http://${CLUSTER}:${port}`,
    databaseUrl: gatewayDb.url,
    dataDir,
    masterKey,
    dexDatabaseUrl: dexDb.url,
    adminUrl: env.ADMIN_PORT ? `http://127.0.0.1:${env.ADMIN_PORT}` : undefined,
    instanceUrl: (name) => `http://${name}.${CLUSTER}:${port}`,
    async stop() {
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
      await gatewayDb.drop();
      await dexDb.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
