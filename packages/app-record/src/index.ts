// The certified app record (spec §2.6) as dex validates it, the worker carries it and gateways store it.
import { z } from 'zod';

export const APP_CATEGORIES = ['app', 'dataPlug', 'tool'] as const;

const slug = z.string().regex(/^[a-z0-9][a-z0-9-_]{0,63}$/, 'must be 1-64 of a-z, 0-9, - and _, starting with a letter or digit');
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048);

/** A namespace, or `namespace/endpoint`, that an app may read. */
const dataPath = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-_]{0,63}(\/[a-zA-Z0-9][a-zA-Z0-9-_]{0,127})?$/, 'must be namespace or namespace/endpoint');

export const appRecordSchema = z.strictObject({
  /** Stable app id; defaults to the namespace. */
  id: slug.optional(),
  title: z.string().trim().min(1).max(256),
  namespace: slug,
  description: z.string().max(16_384).default(''),
  logoUrl: httpUrl,
  url: httpUrl,
  /** Path relative to url; empty when url itself is used. */
  authUrl: z
    .string()
    .max(2048)
    .refine((v) => v === '' || v.startsWith('/'), 'must be empty or a path starting with /')
    .default(''),
  browser: z.boolean().default(false),
  category: z.enum(APP_CATEGORIES, { error: `must be one of ${APP_CATEGORIES.join(', ')}` }),
  setup: z.boolean().default(false),
  loginAvailable: z.boolean().default(false),
  /** Data the app asks to read beyond its own namespace (its write access is its namespace alone). */
  dataRead: z.array(dataPath).max(64).default([]),
});

export type AppRecordInput = z.input<typeof appRecordSchema>;
export type AppRecord = z.output<typeof appRecordSchema> & { id: string };

/** Validates an app record and fills defaults; the id defaults to the namespace. */
export function parseAppRecord(input: unknown): { success: true; record: AppRecord } | { success: false; error: z.ZodError } {
  const result = appRecordSchema.safeParse(input);
  if (!result.success) return { success: false, error: result.error };
  return { success: true, record: { ...result.data, id: result.data.id ?? result.data.namespace } };
}
