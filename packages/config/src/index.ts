// The one configuration of every process, read from the environment once at start and validated.
// Secrets (MASTER_KEY, S3_SECRET_KEY, database passwords) are never logged: use `describeConfig`.
import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const port = z.coerce.number().int().min(0).max(65535);
const seconds = z.coerce.number().int().positive();
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be a domain name');
const list = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
/** `pds.test=http://127.0.0.1:8080,other.example=http://10.0.0.5:8080` */
const gatewayMap = z.string().transform((v, ctx) => {
  const map: Record<string, string> = {};
  for (const entry of v.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [name, url] = entry.split('=');
    if (!name || !url || !URL.canParse(url)) {
      ctx.addIssue({ code: 'custom', message: `"${entry}" is not domain=url` });
      return z.NEVER;
    }
    map[name.trim().toLowerCase()] = url.trim().replace(/\/+$/, '');
  }
  return map;
});

const schema = z.object({
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BIND_ADDRESS: z.string().default('127.0.0.1'),
  PORT: port.default(8080),
  DEX_PORT: port.default(8081),

  CLUSTER_DOMAIN: domain.default('pds.localhost'),
  PUBLIC_URL_SCHEME: z.enum(['http', 'https']).default('https'),
  /** Port that clients use to reach the gateway, when it is not the scheme's default. */
  PUBLIC_PORT: port.optional(),
  TRUST_PROXY: bool.default(false),
  /** Gateway processes sharing PORT (node:cluster); production: one per core. */
  GATEWAY_WORKERS: z.coerce.number().int().min(1).max(256).default(1),

  DATABASE_URL: z.url().optional(),
  DEX_DATABASE_URL: z.url().optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().positive().default(10),
  REDIS_URL: z.url().optional(),
  DATA_DIR: z.string().default('.data'),
  /** 32 bytes, hex or base64: encrypts instance private keys at rest. */
  MASTER_KEY: z.string().optional(),

  STORAGE: z.enum(['local', 's3']).default('local'),
  S3_ENDPOINT: z.url().optional(),
  S3_BUCKET: z.string().default('pds-files'),
  S3_ACCESS_KEY: z.string().optional(),
  S3_SECRET_KEY: z.string().optional(),
  S3_REGION: z.string().default('us-east-1'),
  SIGNED_URL_TTL: seconds.default(300),
  MAX_UPLOAD_BYTES: z.coerce.number().int().positive().default(5 * 1024 ** 3),
  UPLOAD_DEADLINE: seconds.default(3600),

  LOGIN_RATE_LIMIT: z.coerce.number().int().positive().default(10),
  LOGIN_RATE_WINDOW: seconds.default(60),

  /** How gateways and the worker reach dex. */
  DEX_URL: z.url().optional(),
  /** Cluster domains dex certifies at start (the embedded cluster by default). */
  DEX_CLUSTERS: list.optional(),
  /** Instance addresses whose owners administer dex. */
  DEX_ADMINS: list.optional(),
  /** Where instance addresses of a cluster are reached when DNS does not know them. */
  CLUSTER_GATEWAYS: gatewayMap.default({}),
  /** Redis key prefix of the job queues; producers and the worker must agree (tests use their own). */
  QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 of A-Z, a-z, 0-9, _ and -').default('pds'),
});

export type Env = z.input<typeof schema>;
type Parsed = z.output<typeof schema>;

export interface Config extends Omit<Parsed, 'DEX_CLUSTERS' | 'DEX_ADMINS' | 'DEX_URL' | 'MASTER_KEY'> {
  DEX_URL: string;
  DEX_CLUSTERS: string[];
  DEX_ADMINS: string[];
  /** Decoded MASTER_KEY, or undefined when the caller must provide one (see scripts/start.ts). */
  MASTER_KEY?: Buffer;
}

export class ConfigError extends Error {}

/** Parses and validates the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${problems}`);
  }
  const c = result.data;
  if (c.STORAGE === 's3' && (!c.S3_ENDPOINT || !c.S3_ACCESS_KEY || !c.S3_SECRET_KEY)) {
    throw new ConfigError('Invalid configuration: STORAGE=s3 needs S3_ENDPOINT, S3_ACCESS_KEY and S3_SECRET_KEY');
  }
  return {
    ...c,
    DEX_URL: (c.DEX_URL ?? `http://127.0.0.1:${c.DEX_PORT}`).replace(/\/+$/, ''),
    DEX_CLUSTERS: c.DEX_CLUSTERS ?? [c.CLUSTER_DOMAIN],
    DEX_ADMINS: c.DEX_ADMINS ?? [`admin.${c.CLUSTER_DOMAIN}`],
    MASTER_KEY: c.MASTER_KEY === undefined ? undefined : decodeMasterKey(c.MASTER_KEY),
  };
}

export function decodeMasterKey(text: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new ConfigError('Invalid configuration: MASTER_KEY must be 32 bytes (64 hex characters or base64)');
  return key;
}

/** The public base URL of an instance (or of the cluster domain itself). */
export function instanceUrl(config: Pick<Config, 'PUBLIC_URL_SCHEME' | 'PUBLIC_PORT'>, address: string): string {
  const defaultPort = config.PUBLIC_URL_SCHEME === 'https' ? 443 : 80;
  const port = config.PUBLIC_PORT && config.PUBLIC_PORT !== defaultPort ? `:${config.PUBLIC_PORT}` : '';
  return `${config.PUBLIC_URL_SCHEME}://${address}${port}`;
}

const SECRET_KEYS = new Set(['MASTER_KEY', 'S3_SECRET_KEY']);

/** The configuration with secrets and URL passwords masked, for a start-up log line. */
export function describeConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined) continue;
    if (SECRET_KEYS.has(key)) out[key] = '***';
    else if (typeof value === 'string' && /^[a-z]+:\/\/[^/]*:[^/]*@/i.test(value)) out[key] = value.replace(/:\/\/([^:/]*):[^@]*@/, '://$1:***@');
    else out[key] = value;
  }
  return out;
}
