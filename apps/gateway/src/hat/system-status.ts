// GET /api/v2.6/system/status in the original's shape (its SystemStatus controller): a list of
// {title, kind} entries that the HAT web app and mobile SDKs turn into their storage bar. Text entries
// carry {metric, kind: "Text"}; numeric ones {metric, kind: "Numeric", units}, in SI units (kB, MB…)
// as the original printed them. "Database" is the data records, "File" the files.
import { z } from 'zod';
import type { QuotaDefaults, UsageRepository } from '@pds/db';
import { ApiError, json } from '@pds/http';
import type { Clock } from '@pds/tokens';
import type { ResolvedInstance } from '../instances/registry';
import { route, type GatewayRoute } from '../route';

const kind = z.union([
  z.object({ metric: z.string(), kind: z.literal('Text') }),
  z.object({ metric: z.number(), kind: z.literal('Numeric'), units: z.string() }),
]);
export const statusBody = z.array(z.object({ title: z.string(), kind }));
type StatusEntry = z.output<typeof statusBody>[number];

const SI = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];

/** Bytes in the largest SI unit that keeps the figure at 1 or more, two decimals: 1500000 → 1.5 MB. */
export function siBytes(bytes: number): { metric: number; units: string } {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < SI.length - 1) {
    value /= 1000;
    unit++;
  }
  return { metric: Math.round(value * 100) / 100, units: SI[unit] as string };
}

/** How long ago, in the words of the original's PrettyTime: `moments ago`, `3 hours ago`, `2 days ago`. */
export function timeAgo(then: Date, now: Date): string {
  const seconds = Math.max(0, (now.getTime() - then.getTime()) / 1000);
  const steps: [number, string][] = [
    [365 * 86400, 'year'],
    [30 * 86400, 'month'],
    [7 * 86400, 'week'],
    [86400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of steps) {
    const n = Math.floor(seconds / size);
    if (n >= 1) return `${n} ${name}${n === 1 ? '' : 's'} ago`;
  }
  return 'moments ago';
}

const text = (title: string, metric: string): StatusEntry => ({ title, kind: { metric, kind: 'Text' } });
const numeric = (title: string, value: { metric: number; units: string }): StatusEntry => ({ title, kind: { ...value, kind: 'Numeric' } });
const share = (used: number, allowed: number) => ({ metric: allowed > 0 ? Math.round((used / allowed) * 10000) / 100 : 0, units: '%' });

export class SystemStatusService {
  constructor(
    private readonly usage: UsageRepository,
    private readonly quotas: QuotaDefaults,
    private readonly clock: Clock,
  ) {}

  async storage(tenant: ResolvedInstance): Promise<z.output<typeof storageBody>> {
    const status = await this.usage.status(tenant.instance.id);
    if (!status) throw ApiError.notFound('There is no such instance');
    const { files, fileBytes, records, recordBytes } = status.usage;
    return {
      files,
      fileBytes,
      fileQuotaBytes: status.quotaBytes ?? this.quotas.bytes,
      records,
      recordBytes,
      recordQuotaBytes: status.quotaRecordsBytes ?? this.quotas.recordsBytes,
    };
  }

  async status(tenant: ResolvedInstance): Promise<StatusEntry[]> {
    const status = await this.usage.status(tenant.instance.id);
    if (!status) throw ApiError.notFound('There is no such instance');
    const fileQuota = status.quotaBytes ?? this.quotas.bytes;
    const recordQuota = status.quotaRecordsBytes ?? this.quotas.recordsBytes;
    const { fileBytes, recordBytes } = status.usage;
    return [
      // The last time a token was issued (log-in or hourly refresh): this cluster keeps no log of log-ins.
      text('Previous Login', status.lastActiveAt ? timeAgo(status.lastActiveAt, this.clock()) : 'Never'),
      text('Owner Email', status.ownerEmail ?? ''),
      numeric('Database Storage', siBytes(recordQuota)),
      numeric('File Storage', siBytes(fileQuota)),
      numeric('Database Storage Used', siBytes(recordBytes)),
      numeric('File Storage Used', siBytes(fileBytes)),
      numeric('Database Storage Used Share', share(recordBytes, recordQuota)),
      numeric('File Storage Used Share', share(fileBytes, fileQuota)),
    ];
  }
}

/** GET /api/v2.6/system/storage: the same figures in bytes, exact, for a client that words them itself. */
export const storageBody = z.object({
  files: z.int().describe('Files stored (completed and in the trash)'),
  fileBytes: z.number().describe('Their bytes'),
  fileQuotaBytes: z.number().describe("The instance's file allowance in bytes"),
  records: z.int(),
  recordBytes: z.number(),
  recordQuotaBytes: z.number(),
});

export function systemStatusRoutes(status: SystemStatusService): GatewayRoute[] {
  return [
    route({
      method: 'get',
      path: '/api/v2.6/system/status',
      access: 'owner',
      tag: 'hat',
      summary: "The instance's storage (allowance, used, share), previous login and owner e-mail, as the HAT clients read them",
      description:
        'Database: the data records; File: the files (completed and in the trash). Allowances are the quotas. Previous Login is when a token was last issued (log-in or hourly refresh).',
      responses: { 200: { description: 'The entries, in the original order', body: statusBody } },
      handle: async ({ tenant }) => json(await status.status(tenant)),
    }),
    route({
      method: 'get',
      path: '/api/v2.6/system/storage',
      access: 'owner',
      tag: 'hat',
      summary: "The instance's storage used and allowed, in bytes",
      description: "System status's storage figures, exact: the console words them in binary units (KiB, MiB, GiB) as it does file sizes.",
      responses: { 200: { description: 'Files and records: count, bytes and allowance', body: storageBody } },
      handle: async ({ tenant }) => json(await status.storage(tenant)),
    }),
  ];
}
