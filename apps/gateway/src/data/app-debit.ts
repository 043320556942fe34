// The data debit an app's setup creates: its bundle is what the app's record declares it reads.
import type { AppRecord } from '@pds/app-record';
import type { BundleStructure, PropertyQuery } from './bundle-input';

/** What an app's debit runs for before it rolls on (the original used 30 days). */
export const APP_DEBIT_PERIOD_SECONDS = 30 * 24 * 3600;

/** The bundle an app's record asks for: one property per path it reads (`namespace` or `namespace/endpoint`). */
export function appBundle(record: AppRecord): BundleStructure | null {
  if (record.dataRead.length === 0) return null;
  const bundle: Record<string, PropertyQuery> = {};
  for (const path of record.dataRead) bundle[path] = { endpoints: [{ endpoint: path }] };
  return { name: `app-${record.id}`, bundle };
}

export const appDebitKey = (appId: string): string => `app-${appId}`;
