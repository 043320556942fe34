// The one place that reads the instance's app listings. GET /api/v2.6/applications answers either
// this cluster's first shape ({ application: <dex app record>, ... }) or hat-js's HatApplication
// ({ application: { id, info, kind, permissions, ... }, ... }); both become a ConsoleApp.
export type AppStatus = 'not set up' | 'running' | 'needs update' | 'disabled' | 'failing';

export interface ConsoleApp {
  id: string;
  name: string;
  description: string;
  logoUrl?: string;
  /** Where the app lives. */
  url?: string;
  /** The only origins that may receive its token: its registered redirect origins, else its url's. */
  origins: string[];
  status: AppStatus;
  /** Data it may read and write ("namespace" or "namespace/endpoint"). */
  reads: string[];
  writes: string[];
}

interface Listing {
  application: Record<string, unknown>;
  setup?: boolean;
  enabled?: boolean;
  active?: boolean;
  needsUpdating?: boolean;
}

/** What the owner did, in their words: never set up, set up and later disabled, or set up and running. */
function statusOf(listing: Listing): AppStatus {
  if (!listing.setup) return 'not set up';
  if (listing.enabled === false) return 'disabled';
  if (listing.active === false) return 'failing';
  if (listing.needsUpdating) return 'needs update';
  return 'running';
}

/** http(s) origins of the given addresses; anything else is dropped. */
function originsOf(addresses: unknown[]): string[] {
  return addresses.flatMap((address) => {
    try {
      const url = new URL(String(address));
      return url.protocol === 'https:' || url.protocol === 'http:' ? [url.origin] : [];
    } catch {
      return [];
    }
  });
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** HatApplication: application.info / kind / permissions (hat-js's interfaces). */
function fromHatApplication(app: Record<string, unknown>): Omit<ConsoleApp, 'status'> {
  const info = (app.info ?? {}) as {
    name?: string;
    description?: { text?: string };
    headline?: string;
    graphics?: { logo?: { normal?: string } };
  };
  const kind = (app.kind ?? {}) as { url?: string };
  const permissions = (app.permissions ?? {}) as { rolesGranted?: { role: string; detail?: string }[] };
  const setup = (app.setup ?? {}) as { validRedirectUris?: unknown };
  const redirects = Array.isArray(setup.validRedirectUris) ? setup.validRedirectUris.map(String) : [];
  const roles = permissions.rolesGranted ?? [];
  const detail = (role: string) => roles.filter((r) => r.role === role && r.detail).map((r) => r.detail as string);
  return {
    id: String(app.id),
    name: text(info.name) ?? String(app.id),
    description: text(info.description?.text) ?? text(info.headline) ?? '',
    logoUrl: text(info.graphics?.logo?.normal),
    url: text(kind.url),
    origins: originsOf(redirects.length ? redirects : [kind.url]),
    reads: detail('namespaceread'),
    writes: detail('namespacewrite'),
  };
}

/** The dex app record as pushed (title, namespace, logoUrl, url, dataRead). */
function fromAppRecord(app: Record<string, unknown>): Omit<ConsoleApp, 'status'> {
  const namespace = String(app.namespace);
  const dataRead = Array.isArray(app.dataRead) ? app.dataRead.map(String) : [];
  return {
    id: String(app.id ?? namespace),
    name: text(app.title) ?? namespace,
    description: text(app.description) ?? '',
    logoUrl: text(app.logoUrl),
    url: text(app.url),
    origins: originsOf([app.url]),
    reads: [namespace, ...dataRead],
    writes: [namespace],
  };
}

export function toConsoleApp(listing: Listing): ConsoleApp {
  const app = listing.application;
  const details = 'info' in app ? fromHatApplication(app) : fromAppRecord(app);
  return { ...details, status: statusOf(listing) };
}

/** True only when `target` is an absolute http(s) address on one of the app's own registered origins. */
export function onAppOrigin(app: ConsoleApp, target: string): boolean {
  const [origin] = originsOf([target]);
  return origin !== undefined && app.origins.includes(origin);
}
