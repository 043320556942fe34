// Calls to dex's administrators' API (/api/admin/…, same origin: dex) from its console, and what they answer.
import { staffApi } from '../staff/api';

export const dexApi = staffApi('/api/admin/session', 'Dex could not be reached.');
export const dex = dexApi.call;
export const { failureText } = dexApi;

export type AppRecord = { id: string; title?: string; description?: string } & Record<string, unknown>;

export interface AppVersion {
  version: number;
  record: AppRecord;
  createdBy: string;
  createdAt: string;
}

export interface App extends AppVersion {
  appId: string;
}

export type PushState = 'queued' | 'sending' | 'retrying' | 'delivered' | 'failed';

export interface Push {
  id: string;
  address: string;
  version: number;
  state: PushState;
  attempts: number;
  retries: number;
  lastError?: string;
  deliveredAt?: string;
  setUp?: boolean;
}

export interface Instance {
  address: string;
  cluster: string;
  state: 'registered' | 'pending' | 'key-mismatch' | 'retired';
  fingerprint?: string;
  registeredAt: string;
  retiredAt?: string;
}

/** Who receives a push: the cluster's registered instances, these of them, or those with the app set up. */
export interface Selection {
  cluster: string;
  addresses?: string[];
  setUp?: boolean;
}
