// `pnpm start`: the whole cluster on one machine. With no DATABASE_URL it runs embedded PostgreSQL in
// DATA_DIR; it uses REDIS_CLUSTER_NODES (a Redis Cluster) or REDIS_URL, or a local Redis, or starts
// redis-server from PATH; mail goes to SMTP_URL, or to a local catcher that prints each message here;
// then it applies migrations and runs gateway, dex and their workers in this process. Ctrl-C (or SIGTERM) stops everything
// gracefully, the embedded database last.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfigFor, type ClusterConfig } from '@pds/config';
import { startDex, startDexWorker } from '@pds/dex';
import { startGateway, startGatewayWorker, type RunningGateway } from '@pds/gateway';
import { once, runProcess, setHeapGrowth, type Stoppable } from '@pds/runtime';
import { ensureConsoleBuilt } from './lib/console';
import { ensureDatabase, ensurePostgres, redact, withDatabase } from './lib/postgres';
import { migrate } from './lib/prisma';
import { ensureRedis } from './lib/redis';
import { startSmtpCatcher, type CaughtMail } from './lib/smtp-catcher';

// Every long-running process sets the V8 heap's growth itself (see @pds/runtime heap.ts for why).
setHeapGrowth();

type Closer = () => Promise<void>;

/** A value from the environment, else the one kept in DATA_DIR (created on first start, readable by its owner only). */
function kept(dataDir: string, variable: string, fileName: string, create: () => string): string {
  const given = process.env[variable];
  if (given) return given;
  const file = path.join(dataDir, fileName);
  if (!existsSync(file)) writeFileSync(file, create() + '\n', { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/**
 * The dex administrator's instance (`admin.<cluster>` by default). `admin` is reserved for public
 * sign-up, so the operator's own start-up creates it, with ADMIN_PASSWORD or a generated password
 * kept in DATA_DIR/admin-password.
 */
async function provisionAdmin(gateway: RunningGateway, config: ClusterConfig, dataDir: string): Promise<string | undefined> {
  const address = `admin.${config.CLUSTER_DOMAIN}`;
  if (!config.DEX_ADMINS.includes(address)) return undefined;
  const pass = kept(dataDir, 'ADMIN_PASSWORD', 'admin-password', () => randomBytes(18).toString('base64url'));
  const { created } = await gateway.gateway.signup.provision({
    username: 'admin',
    fullName: 'Cluster administrator',
    email: `admin@${config.CLUSTER_DOMAIN}`,
    pass,
  });
  const where = process.env.ADMIN_PASSWORD ? 'ADMIN_PASSWORD' : path.join(dataDir, 'admin-password');
  return `${address} ${created ? 'created' : 'exists'}; its password is in ${where}`;
}

/** Whether `pid` is a running `pnpm start` (not some later process that got its number). */
function isStart(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const cmdline = `/proc/${pid}/cmdline`;
  return !existsSync(cmdline) || readFileSync(cmdline, 'utf8').includes('scripts/start.ts');
}

/**
 * Claims DATA_DIR for this process, before anything in it is read or written: a second start on the same
 * folder would find its database locked and rewrite the files the first one's users rely on (its
 * PostgreSQL port). A claim left by a process that no longer runs is taken over. Returns the release.
 */
function claimDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, 'start.pid');
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(readFileSync(file, 'utf8').trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isStart(holder)) {
      throw new Error(
        `a pnpm start is already running on ${dataDir} (pid ${holder}); this one changed nothing. ` +
          'Use that one, stop it first (Ctrl-C in its terminal), or give this one its own DATA_DIR, PORT and DEX_PORT.',
      );
    }
    rmSync(file, { force: true });
  }
}

async function start(): Promise<Stoppable> {
  const closers: Closer[] = [];
  const stop = once(async () => {
    for (const close of closers.reverse()) await close().catch((e: unknown) => console.error(e));
  });
  try {
    const dataDir = path.resolve(process.env.DATA_DIR ?? '.data');
    mkdirSync(dataDir, { recursive: true });
    const release = claimDataDir(dataDir);
    closers.push(async () => release());
    const port = process.env.PORT ?? '8080';
    const clusterDomain = process.env.CLUSTER_DOMAIN ?? 'pds.localhost';

    const postgres = process.env.DATABASE_URL
      ? await ensurePostgres({ configuredUrl: process.env.DATABASE_URL, dataDir })
      : await ensurePostgres({ dataDir, embedded: true, log: () => undefined });
    closers.push(() => postgres.stop());
    const databaseUrl = process.env.DATABASE_URL ?? (await ensureDatabase(postgres.adminUrl, 'pds'));
    const dexDatabaseUrl =
      process.env.DEX_DATABASE_URL ?? (await ensureDatabase(postgres.adminUrl, `${new URL(databaseUrl).pathname.slice(1)}_dex`));
    await migrate('gateway', databaseUrl);
    await migrate('dex', dexDatabaseUrl);

    // A Redis Cluster is used as given; otherwise one server is found or started.
    const redis = process.env.REDIS_CLUSTER_NODES ? undefined : await ensureRedis(process.env.REDIS_URL);
    if (redis) closers.push(() => redis.stop());

    // No relay configured: mail (password resets) is caught here, printed, and kept in DATA_DIR/mail.
    const mailDir = path.join(dataDir, 'mail');
    const catcher = process.env.SMTP_URL ? undefined : await startSmtpCatcher({ onMail: (mail) => keepMail(mailDir, mail) });
    if (catcher) closers.push(() => catcher.stop());

    const config = loadConfigFor('cluster', {
      PUBLIC_URL_SCHEME: 'http',
      PUBLIC_PORT: port,
      CLUSTER_GATEWAYS: `${clusterDomain}=http://127.0.0.1:${port}`,
      ...process.env,
      CLUSTER_DOMAIN: clusterDomain,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      DEX_DATABASE_URL: dexDatabaseUrl,
      ...(redis ? { REDIS_URL: redis.url } : {}),
      ...(catcher ? { SMTP_URL: catcher.url } : {}),
      // Its own key prefix, kept with its data: counters and queues start afresh with a new DATA_DIR, and
      // never mix with another start's (or the tests') on a shared Redis.
      QUEUE_PREFIX: kept(dataDir, 'QUEUE_PREFIX', 'queue-prefix', () => `pds-${randomBytes(4).toString('hex')}`),
      MASTER_KEY: kept(dataDir, 'MASTER_KEY', 'master.key', () => randomBytes(32).toString('hex')),
      // The admin API listens only when asked for (ADMIN_PORT); its token is then kept like the master key.
      ...(process.env.ADMIN_PORT
        ? { ADMIN_TOKEN: kept(dataDir, 'ADMIN_TOKEN', 'admin-token', () => randomBytes(32).toString('hex')) }
        : {}),
    });

    ensureConsoleBuilt(console.log);
    const gateway = await startGateway(config);
    closers.push(() => gateway.close());
    // One process, one metrics port: the gateway's (the others would collide on METRICS_PORT).
    const quiet = { ...config, METRICS_PORT: undefined };
    const dex = await startDex(quiet);
    closers.push(() => dex.close());
    const gatewayWorker = await startGatewayWorker(quiet);
    closers.push(() => gatewayWorker.close());
    const dexWorker = await startDexWorker(quiet);
    closers.push(() => dexWorker.close());
    const admin = await provisionAdmin(gateway, config, dataDir);

    const base = `http://${clusterDomain}:${port}`;
    console.log(`
PDS cluster running (Ctrl-C stops it)
  console   ${base}/ (sign up), then http://<name>.${clusterDomain}:${port}/ in a browser
  gateway   ${gateway.url}   instances at http://<name>.${clusterDomain}:${port}
  dex       ${dex.url}   certified cluster: ${config.DEX_CLUSTERS.join(', ')}; admins: ${config.DEX_ADMINS.join(', ')}
  admin     ${admin ?? '(not under this cluster)'}${
    gateway.adminUrl
      ? `\n  admin API ${gateway.adminUrl} (ADMIN_TOKEN ${process.env.ADMIN_TOKEN ? 'as given' : `in ${path.join(dataDir, 'admin-token')}`}): pnpm admin instances list`
      : ''
  }
  postgres  ${postgres.origin} ${redact(withDatabase(postgres.adminUrl, ''))}
  redis     ${redis ? `${redis.origin} ${redis.url} (keys under ${config.QUEUE_PREFIX}:)` : `cluster ${config.REDIS_CLUSTER_NODES?.join(',')} (keys under ${config.QUEUE_PREFIX}: and {${config.QUEUE_PREFIX}}:)`}
  mail      ${catcher ? `caught at ${catcher.url}, printed here and kept in ${mailDir} (set SMTP_URL to send it)` : 'sent to SMTP_URL'}
  data      ${dataDir} (files: ${config.STORAGE})

Sign up an instance:
  curl -s ${base}/api/signup -H 'Content-Type: application/json' \\
    -d '{"fullName":"Alice Example","username":"alice","email":"alice@example.com","pass":"correct-horse-battery-staple","passRepeat":"correct-horse-battery-staple"}'
`);
    return { close: stop, graceMs: config.SHUTDOWN_TIMEOUT * 1000 };
  } catch (error) {
    await stop();
    throw new Error(`pnpm start failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** A caught mail, as a person reads it: in the terminal, and as a text file (newest name last) in `folder`. */
function keepMail(folder: string, mail: CaughtMail): void {
  const text = `To: ${mail.to.join(', ')}\nSubject: ${mail.subject}\n\n${mail.text.trim()}\n`;
  console.log(`\n--- mail\n${text}---\n`);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(folder, `${new Date().toISOString().replace(/[:.]/g, '-')}.txt`), text, { mode: 0o600 });
}

runProcess(start);
