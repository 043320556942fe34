// An app as the original's clients read it: HAT's HatApplication, mapped from the dex app record
// (spec §2.6). Fields the record does not carry get the defaults documented in docs/hat-compat.md.
import type { AppRecord } from '@pds/app-record';
import type { Application } from '@pds/db';
import { appBundle } from '../data/app-debit';

/** The record's category as the original's application kinds. */
const KINDS: Record<AppRecord['category'], string> = { app: 'App', dataPlug: 'DataPlug', tool: 'Tool' };

/** What the state of an app is beyond its row: computed by ApplicationService. */
export interface AppStatus {
  /** The app's data debit is active (always true for an app that requires no data). */
  debitActive: boolean;
  /** When the newest record in the app's namespace was written. */
  mostRecentData: Date | null;
}

/** Dex versions are integers; the original's clients expect a semantic version string. */
export const versionString = (version: number): string => `${version}.0.0`;

/**
 * Where the app's login starts: its authUrl relative to its url, kept on the url's origin (an authUrl
 * such as `//elsewhere.example/` would otherwise leave it).
 */
export function setupUrl(record: AppRecord): string {
  const auth = new URL(record.authUrl || '/', record.url);
  return record.authUrl && auth.origin === new URL(record.url).origin ? auth.toString() : record.url;
}

/** The origins an app token may be handed to, and CORS allows: the app's own (its url's). */
export const appOrigins = (record: AppRecord): string[] => [new URL(record.url).origin];

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function roles(record: AppRecord) {
  return [
    { role: 'namespacewrite', detail: record.namespace },
    { role: 'namespaceread', detail: record.namespace },
    ...record.dataRead.map((path) => ({ role: 'namespaceread', detail: path })),
  ];
}

export function hatApplicationContent(app: Application) {
  const record = app.record as AppRecord;
  const version = versionString(app.version);
  const released = app.receivedAt.toISOString();
  const logo = { normal: record.logoUrl };
  const bundle = appBundle(record);
  return {
    id: record.id,
    kind: { kind: KINDS[record.category], url: record.url },
    info: {
      version,
      name: record.title,
      headline: record.title,
      description: { text: record.description, markdown: record.description, html: `<p>${escapeHtml(record.description)}</p>` },
      dataUsePurpose: record.description,
      graphics: { banner: logo, logo, screenshots: [] },
      published: true,
      rating: { score: 'unrated', points: 0 },
      supportContact: '',
      termsUrl: record.url,
    },
    developer: { id: new URL(record.url).host, name: new URL(record.url).host, url: new URL(record.url).origin, country: '' },
    permissions: {
      rolesGranted: roles(record),
      ...(bundle ? { dataRetrieved: bundle, dataRequired: { bundle, startDate: released, endDate: '', rolling: true } } : {}),
    },
    setup: { kind: 'External', url: setupUrl(record), onboarding: [], validRedirectUris: appOrigins(record) },
    status: {
      kind: 'Internal',
      compatibility: version,
      expectedStatus: 200,
      dataPreviewEndpoint: `/api/v2.6/data/${record.namespace}`,
      recentDataCheckEndpoint: `/api/v2.6/data/${record.namespace}`,
      versionReleaseDate: released,
      statusUrl: '',
    },
  };
}

/** The status object: setup/enabled from the row, active from the debit, needsUpdating from the versions. */
export function hatApplication(app: Application, status: AppStatus) {
  return {
    application: hatApplicationContent(app),
    setup: app.setup,
    enabled: app.enabled,
    active: app.enabled && status.debitActive,
    ...(app.setup ? { needsUpdating: app.setupVersion !== null && app.version > app.setupVersion } : {}),
    ...(status.mostRecentData ? { mostRecentData: status.mostRecentData.toISOString() } : {}),
  };
}

export type HatApplication = ReturnType<typeof hatApplication>;
