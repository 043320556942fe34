// Share links (GET/POST/DELETE /api/v2.6/files/links), and the words for their state. What the activity
// log says of them is in activity/words.ts.
import { call } from '../api';

const LINKS = '/api/v2.6/files/links';

export type LinkState = 'active' | 'expired' | 'used-up' | 'revoked';

export interface ShareLink {
  id: string;
  /** Only in the answer that made it: the server keeps the address hashed. */
  url?: string;
  fileIds: string[];
  state: LinkState;
  hasPassword: boolean;
  expiresAt?: string;
  downloadLimit?: number;
  downloads: number;
  views: number;
  lastUsedAt?: string;
  allowDownload: boolean;
  createdAt: string;
  revokedAt?: string;
}

export interface NewLink {
  fileIds: string[];
  expiresAt?: string;
  password?: string;
  downloadLimit?: number;
  allowDownload: boolean;
}

export const createLink = (link: NewLink) => call<ShareLink>(LINKS, { method: 'POST', body: link });

export const linksOf = (fileId: string) => call<ShareLink[]>(`${LINKS}?fileId=${encodeURIComponent(fileId)}`);

export const revokeLink = (id: string) => call<ShareLink>(`${LINKS}/${encodeURIComponent(id)}`, { method: 'DELETE' });

export const STATE_WORDS: Record<LinkState, string> = {
  active: 'Open',
  expired: 'Expired',
  'used-up': 'Used up',
  revoked: 'Revoked',
};
