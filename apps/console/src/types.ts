// The API's shapes as the console reads them (the spec's file record, users, data records).
export interface Permission {
  userId: string;
  contentReadable: boolean;
}

export interface FileRecord {
  fileId: string;
  name: string;
  source: string;
  tags?: string[];
  title?: string;
  description?: string;
  dateCreated?: string;
  lastUpdated?: string;
  status: { status: 'New' | 'Completed' | 'Deleted'; size?: number };
  contentUrl?: string;
  /** A signed address of a small picture of the content (images), when the server made one. */
  thumbnailUrl?: string;
  contentPublic: boolean;
  permissions?: Permission[];
}

export interface UserAccount {
  userId: string;
  username: string;
  email?: string;
  fullName?: string;
  kind: 'owner' | 'user' | 'application';
  enabled: boolean;
  createdAt: string;
}

export interface DataRecord {
  endpoint: string;
  recordId: string;
  data: unknown;
}

/** GET /api/v2.6/data/sources: each namespace's endpoints. */
export type DataSources = Record<string, string[]>;
