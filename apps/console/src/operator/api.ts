// Calls to the admin API from the operator console (same origin: the admin listener), through the staff
// consoles' client (staff/api.ts).
import { staffApi } from '../staff/api';

export type { AuditEntry } from '../staff/api';

const api = staffApi('/session', 'The admin listener could not be reached.');
export const operatorApi = api;
export const admin = api.call;
export const { failureText, onLoggedOut } = api;

export interface Usage {
  files: number;
  fileBytes: number;
  records: number;
  recordBytes: number;
}

export interface Instance {
  address: string;
  state: 'active' | 'suspended' | 'closing';
  stateReason?: string;
  closeAfter?: string;
  createdAt: string;
  lastActiveAt?: string;
  dexState: 'pending' | 'registered' | 'failed';
  ownerEmail?: string;
  usage: Usage;
  quota: { bytes: number; recordsBytes: number };
  customQuota: { bytes?: number; recordsBytes?: number };
}

export interface InstanceDetails extends Instance {
  history: { state: string; reason: string; actor: string; at: string }[];
  accounts: { owner: number; user: number; application: number };
  apps: { appId: string; title?: string; version: number; setup: boolean; enabled: boolean }[];
  recentEvents: { type: string; actorKind: string; at: string }[];
  portability: { kind: 'export' | 'import'; status: string; createdAt: string; finishedAt?: string; expiresAt?: string }[];
}
