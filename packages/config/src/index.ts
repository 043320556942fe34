// The one configuration of every process, read from the environment once at start and validated.
// Secrets (MASTER_KEY, S3_SECRET_KEY, database passwords) are never logged.
import { isIP } from 'node:net';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const seconds = z.coerce.number().int().positive();
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be a domain name');
const list = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean),
);
/** `pds.test=http://127.0.0.1:8080,other.example=http://10.0.0.5:8080` */
const gatewayMap = z.string().transform((v, ctx) => {
  const map: Record<string, string> = {};
  for (const entry of v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, url] = entry.split('=');
    if (!name || !url || !URL.canParse(url)) {
      ctx.addIssue({ code: 'custom', message: `"${entry}" is not domain=url` });
      return z.NEVER;
    }
    map[name.trim().toLowerCase()] = url.trim().replace(/\/+$/, '');
  }
  return map;
});
/**
 * `https://app.example,http://localhost:3000`: exact origins, never "*" (CORS responses allow
 * credentials, and a wildcard must not go with them).
 */
const origins = z.string().transform((v, ctx) => {
  const out: string[] = [];
  for (const entry of v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const origin = URL.canParse(entry) ? new URL(entry).origin : 'null';
    if (!/^https?:\/\//.test(origin) || origin !== entry.replace(/\/$/, '').toLowerCase()) {
      ctx.addIssue({ code: 'custom', message: `"${entry}" is not an http(s) origin such as https://app.example (no "*", no path)` });
      return z.NEVER;
    }
    out.push(origin);
  }
  return out;
});

/**
 * TRUST_PROXY: whose X-Forwarded-For (and -Host, -Proto) is believed, as proxy-addr reads it. A number is
 * how many proxies stand in front (1: the peer is the proxy, the address it appended is the client); a
 * list names the proxies by address, CIDR or proxy-addr's names. `true` (any peer) is refused: then any
 * client could write its own address and escape every per-address limit.
 */
export type TrustedProxies = number | string[];

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, a CIDR of one, or a name proxy-addr knows; the problem with it otherwise. */
function proxyEntryProblem(entry: string): string | undefined {
  if (PROXY_NAMES.has(entry)) return undefined;
  if (/^\d+$/.test(entry)) return `"${entry}": a hop count stands alone (TRUST_PROXY=${entry}), not in a list of addresses`;
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  if (!family || extra !== undefined || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits)))
    return `"${entry}" is not an address, a CIDR (10.0.0.0/8, fd00::/8) or loopback/linklocal/uniquelocal`;
  return undefined;
}

const TRUST_ANY =
  '"true" is refused: it believes X-Forwarded-For from any peer, so any client could write its own address there and ' +
  'escape every per-address limit. Name your proxies instead: how many stand in front of this process ' +
  '(TRUST_PROXY=1 for one proxy) or their addresses (TRUST_PROXY=10.0.0.0/8,fd00::/8)';

const trustedProxies = z.string().transform((text, ctx): TrustedProxies => {
  const value = text.trim().toLowerCase();
  if (value === 'true') {
    ctx.addIssue({ code: 'custom', message: TRUST_ANY });
    return z.NEVER;
  }
  if (value === 'false') return 0;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 16) {
      ctx.addIssue({ code: 'custom', message: `${value} proxies in front is more than any deployment has (at most 16)` });
      return z.NEVER;
    }
    return hops;
  }
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const problem = proxyEntryProblem(entry);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
  }
  return entries;
});

const masterKey = z.string().transform((text, ctx) => {
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) {
    ctx.addIssue({ code: 'custom', message: 'must be 32 bytes (64 hex characters or base64)' });
    return z.NEVER;
  }
  return key;
});

/** Every variable any process reads; each process's schema below makes its own ones required. */
const base = z.object({
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BIND_ADDRESS: z.string().default('127.0.0.1'),
  PORT: port.default(8080),
  DEX_PORT: port.default(8081),
  /** Seconds a stopping process gives in-flight requests and jobs before it cuts them off. */
  SHUTDOWN_TIMEOUT: seconds.default(10),
  /** Where Prometheus metrics are served (on BIND_ADDRESS); none when unset. */
  METRICS_PORT: port.optional(),
  /** Where gateways serve the operator's admin API (on BIND_ADDRESS, never the public port); none when unset. */
  ADMIN_PORT: port.optional(),
  /** The admin API's bearer secret; a gateway with ADMIN_PORT refuses to start without it. */
  ADMIN_TOKEN: z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)').optional(),
  /** Where `pnpm admin` reaches the admin API; by default http://BIND_ADDRESS:ADMIN_PORT. */
  ADMIN_URL: z.url().optional(),

  CLUSTER_DOMAIN: domain.default('pds.localhost'),
  PUBLIC_URL_SCHEME: z.enum(['http', 'https']).default('https'),
  /** Port that clients use to reach the gateway, when it is not the scheme's default. */
  PUBLIC_PORT: port.optional(),
  /**
   * Whose X-Forwarded-Host/-For/-Proto are believed (TrustedProxies above): by default no one's, and the
   * client is the socket's peer. Forwarded headers from any other peer are ignored.
   */
  TRUST_PROXY: trustedProxies.default(0),
  /** Gateway processes sharing PORT (node:cluster); production: one per core. */
  GATEWAY_WORKERS: z.coerce.number().int().min(1).max(256).default(1),

  DATABASE_URL: z.url().optional(),
  DEX_DATABASE_URL: z.url().optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().positive().default(10),
  /** A streaming replica of DATABASE_URL for the reads that tolerate lag (search, listings, bundles); optional. */
  DATABASE_REPLICA_URL: z.url().optional(),
  /** Seconds an instance's lag-tolerant reads stay on the primary after one of its writes (read-your-writes). */
  DATABASE_REPLICA_WINDOW: seconds.default(2),
  REDIS_URL: z.url().optional(),
  /** A Redis Cluster instead of REDIS_URL: some of its nodes as `host:port,host:port,…` (the rest are discovered). */
  REDIS_CLUSTER_NODES: list.pipe(z.array(z.string().regex(/^[^\s:,]+:\d{1,5}$/, 'must be host:port')).min(1)).optional(),
  /** The password of every node of REDIS_CLUSTER_NODES (their requirepass/masterauth), when they have one. */
  REDIS_CLUSTER_PASSWORD: z.string().min(1).optional(),
  DATA_DIR: z.string().default('.data'),
  /** 32 bytes, hex or base64: encrypts instance private keys, dex's key and local blobs at rest. */
  MASTER_KEY: masterKey.optional(),

  STORAGE: z.enum(['local', 's3']).default('local'),
  S3_ENDPOINT: z.url().optional(),
  S3_BUCKET: z.string().default('pds-files'),
  S3_ACCESS_KEY: z.string().optional(),
  S3_SECRET_KEY: z.string().optional(),
  S3_REGION: z.string().default('us-east-1'),
  SIGNED_URL_TTL: seconds.default(300),
  MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(5 * 1024 ** 3),
  UPLOAD_DEADLINE: seconds.default(3600),
  /** Hours an export archive stays downloadable before the worker removes it. */
  EXPORT_TTL_HOURS: z.coerce.number().positive().default(48),
  /** Largest import archive (compressed) a client may upload. */
  IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(20 * 1024 ** 3),
  /** An instance's file bytes, unless the operator set its own quota. */
  QUOTA_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 ** 3),
  /** An instance's data record bytes, unless the operator set its own quota. */
  QUOTA_RECORDS_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(256 * 1024 ** 2),
  /** Days a deleted file waits in the trash (still counted in usage) before the worker purges it. */
  TRASH_DAYS: z.coerce.number().int().positive().max(3650).default(30),

  /** Days an instance its owner (or the operator) closes keeps answering its owner, who may cancel, before it is erased. */
  INSTANCE_CLOSE_GRACE_DAYS: z.coerce.number().int().min(0).max(365).default(7),

  /** Browser origins allowed to call instances (CORS); by default each instance's own apps' origins. */
  CORS_ALLOWED_ORIGINS: origins.optional(),

  /** Log-in attempts (and reset-link tries) per client address and instance per window. */
  LOGIN_RATE_LIMIT: z.coerce.number().int().positive().default(10),
  LOGIN_RATE_WINDOW: seconds.default(60),
  /**
   * Failed log-ins (wrong password or second-factor code) of one account from every address together, and
   * failed reset links of one instance, per window, before the addresses that failed are refused
   * (@pds/http AccountLimit); an address that has not failed still gets its try.
   */
  LOGIN_ACCOUNT_LIMIT: z.coerce.number().int().positive().default(20),
  LOGIN_ACCOUNT_WINDOW: seconds.default(3600),
  /** Sign-ups per client address per window (each costs a key pair and rows). */
  SIGNUP_RATE_LIMIT: z.coerce.number().int().positive().default(10),
  SIGNUP_RATE_WINDOW: seconds.default(3600),
  /** Dex registerHat calls per client address per window (unauthenticated by the spec). */
  REGISTER_RATE_LIMIT: z.coerce.number().int().positive().default(120),
  REGISTER_RATE_WINDOW: seconds.default(60),

  /**
   * Where the gateway worker sends mail (password resets): smtp://user:pass@host:587 (STARTTLS when the
   * server offers it) or smtps://user:pass@host:465. Unset: mail is not sent (`pnpm start` runs a catcher).
   */
  SMTP_URL: z
    .url()
    .refine((v) => /^smtps?:$/.test(new URL(v).protocol), 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** The From of every mail; by default "PDS <no-reply@CLUSTER_DOMAIN>". */
  MAIL_FROM: z.string().min(3).optional(),
  /** Password-reset requests per client address, and (ten times as many) per instance, per window. */
  RESET_RATE_LIMIT: z.coerce.number().int().positive().default(5),
  RESET_RATE_WINDOW: seconds.default(3600),
  /** How long the owner's activity log (changes and reads) and the event outbox are kept, in days. */
  ACTIVITY_RETENTION_DAYS: z.coerce.number().int().positive().default(90),
  /** Lets webhooks reach private and loopback addresses (tests, a closed network); refused by default. */
  WEBHOOK_ALLOW_PRIVATE: z.stringbool().default(false),
  /** The longest wait between two tries of a webhook delivery, in seconds (each wait doubles up to it). */
  WEBHOOK_MAX_BACKOFF: seconds.default(600),
  /** Seconds between heartbeat comments on an event stream (proxies close streams that stay silent). */
  EVENTS_HEARTBEAT: seconds.default(20),

  /** How gateways and the gateway worker reach dex. */
  DEX_URL: z.url().optional(),
  /** Cluster domains dex certifies at start (the embedded cluster by default). */
  DEX_CLUSTERS: list.optional(),
  /** Instance addresses whose owners administer dex. */
  DEX_ADMINS: list.optional(),
  /** Where instance addresses of a cluster are reached when DNS does not know them. */
  CLUSTER_GATEWAYS: gatewayMap.default({}),
  /** Redis key prefix of the job queues; all processes of a cluster must agree (tests use their own). */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 of A-Z, a-z, 0-9, _ and -')
    .default('pds'),
});

const gatewayDb = { DATABASE_URL: z.url() };
const dexDb = { DEX_DATABASE_URL: z.url() };
const redis = { REDIS_URL: z.url() };
const key = { MASTER_KEY: masterKey };

/** What each process needs: a missing variable stops its start-up with the variable's name. */
const schemas = {
  gateway: base.extend({ ...gatewayDb, ...redis, ...key }),
  // The upload sweep removes blobs, and the local store derives its key from MASTER_KEY.
  'gateway-worker': base.extend({ ...gatewayDb, ...redis, ...key }),
  dex: base.extend({ ...dexDb, ...redis, ...key }),
  // App pushes are signed with dex's key, sealed under MASTER_KEY.
  'dex-worker': base.extend({ ...dexDb, ...redis, ...key }),
  'gateway-migrate': base.extend(gatewayDb),
  'dex-migrate': base.extend(dexDb),
  // Master-key rotation (rotate-key-main.ts): the current key and the one to re-seal under.
  'gateway-rotate-key': base.extend({ ...gatewayDb, ...key, NEW_MASTER_KEY: masterKey }),
  'dex-rotate-key': base.extend({ ...dexDb, ...key, NEW_MASTER_KEY: masterKey }),
  /** `pnpm start` and the tests: every process in one. */
  cluster: base.extend({ ...gatewayDb, ...dexDb, ...redis, ...key }),
};
export type ProcessName = keyof typeof schemas;

export type Env = z.input<typeof base>;

/** S3 settings are all there when STORAGE=s3 (loadConfig checks), so code narrowing on STORAGE needs no casts. */
type Storage = { STORAGE: 'local' } | { STORAGE: 's3'; S3_ENDPOINT: string; S3_ACCESS_KEY: string; S3_SECRET_KEY: string };
type Resolved<T> = Omit<T, 'DEX_CLUSTERS' | 'DEX_ADMINS' | 'DEX_URL' | 'STORAGE' | 'REDIS_URL'> & {
  /** Absent when REDIS_CLUSTER_NODES names a cluster instead (a process needing Redis has one of the two). */
  REDIS_URL?: string;
  DEX_URL: string;
  DEX_CLUSTERS: string[];
  DEX_ADMINS: string[];
} & Storage;

/** The variables every process may read, with the ones a process requires possibly absent. */
export type Config = Resolved<z.output<typeof base>>;
export type GatewayConfig = Resolved<z.output<(typeof schemas)['gateway']>>;
export type GatewayWorkerConfig = Resolved<z.output<(typeof schemas)['gateway-worker']>>;
export type DexConfig = Resolved<z.output<(typeof schemas)['dex']>>;
export type DexWorkerConfig = Resolved<z.output<(typeof schemas)['dex-worker']>>;
export type ClusterConfig = Resolved<z.output<(typeof schemas)['cluster']>>;
type ConfigOf<P extends ProcessName> = Resolved<z.output<(typeof schemas)[P]>>;

export class ConfigError extends Error {}

/** Parses and validates the environment for any process, requiring nothing; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  return parse(base, env);
}

/** The configuration of one process: also names every variable that process requires and lacks. */
export function loadConfigFor<P extends ProcessName>(name: P, env: Record<string, string | undefined> = process.env): ConfigOf<P> {
  return parse(schemas[name], env) as ConfigOf<P>;
}

function parse(schema: z.ZodObject, env: Record<string, string | undefined>) {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  // DEX_DATABASE_URL defaults to a database beside the gateway's: <DATABASE_URL's name>_dex.
  if (!present.DEX_DATABASE_URL && present.DATABASE_URL && URL.canParse(present.DATABASE_URL)) {
    const url = new URL(present.DATABASE_URL);
    url.pathname = `/${url.pathname.slice(1) || 'postgres'}_dex`;
    present.DEX_DATABASE_URL = url.toString();
  }
  if (present.REDIS_URL && present.REDIS_CLUSTER_NODES)
    throw new ConfigError('Invalid configuration: set REDIS_URL (one server) or REDIS_CLUSTER_NODES (a cluster), not both');
  // A cluster's nodes stand in for the Redis URL a process requires.
  const effective = present.REDIS_CLUSTER_NODES && 'REDIS_URL' in schema.shape ? schema.extend({ REDIS_URL: z.url().optional() }) : schema;
  const result = effective.safeParse(present);
  if (!result.success) {
    const problems = result.error.issues
      .map(
        (i) => `${i.path.join('.')}: ${i.code === 'invalid_type' && present[String(i.path[0])] === undefined ? 'is required' : i.message}`,
      )
      .join('; ');
    throw new ConfigError(`Invalid configuration: ${problems}`);
  }
  const c = result.data as z.output<typeof base>;
  if (c.STORAGE === 's3' && (!c.S3_ENDPOINT || !c.S3_ACCESS_KEY || !c.S3_SECRET_KEY)) {
    throw new ConfigError('Invalid configuration: STORAGE=s3 needs S3_ENDPOINT, S3_ACCESS_KEY and S3_SECRET_KEY');
  }
  return {
    ...c,
    DEX_URL: (c.DEX_URL ?? `http://127.0.0.1:${c.DEX_PORT}`).replace(/\/+$/, ''),
    DEX_CLUSTERS: c.DEX_CLUSTERS ?? [c.CLUSTER_DOMAIN],
    DEX_ADMINS: c.DEX_ADMINS ?? [`admin.${c.CLUSTER_DOMAIN}`],
  } as Config;
}

/**
 * For an entry point: its process's configuration, or else one line on stderr naming every bad
 * variable and exit code 1 (an uncaught ConfigError would print a stack trace around that line).
 */
export function configOrExit<P extends ProcessName>(name: P, env: Record<string, string | undefined> = process.env): ConfigOf<P> {
  try {
    return loadConfigFor(name, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}

/** The public base URL of an instance (or of the cluster domain itself). */
export function instanceUrl(config: Pick<Config, 'PUBLIC_URL_SCHEME' | 'PUBLIC_PORT'>, address: string): string {
  const defaultPort = config.PUBLIC_URL_SCHEME === 'https' ? 443 : 80;
  const port = config.PUBLIC_PORT && config.PUBLIC_PORT !== defaultPort ? `:${config.PUBLIC_PORT}` : '';
  return `${config.PUBLIC_URL_SCHEME}://${address}${port}`;
}
