// Instance addresses as dex accepts them. Checked before anything is stored or fetched: dex's worker
// only ever calls hosts that this module let through and that lie under a certified cluster.
import { ApiError } from '@pds/http';

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** A lower-case DNS name of one or more labels (cluster domains). */
export function isDomainName(name: string): boolean {
  const labels = name.split('.');
  return name.length <= 253 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels[labels.length - 1] as string);
}

export interface InstanceAddress {
  address: string;
  /** The address minus its first label: the cluster domain it claims to live under. */
  cluster: string;
}

/** A syntactically valid instance address (`<name>.<cluster domain>`), or a 400 naming `field`. */
export function parseInstanceAddress(raw: unknown, field = 'hatAddress'): InstanceAddress {
  const bad = (rule: string) => ApiError.badRequest(`${field}: ${rule}`);
  if (typeof raw !== 'string' || raw.length === 0) throw bad('is required');
  if (raw.length > 253) throw bad('must be at most 253 characters');
  const address = raw.trim().toLowerCase().replace(/\.$/, '');
  const labels = address.split('.');
  // IPv6 literals, ports, paths, userinfo and the like all fail the label rule.
  if (!labels.every((l) => LABEL.test(l))) throw bad('must be a domain name such as alice.example.org');
  if (labels.length < 2 || address === 'localhost') throw bad('must be an instance address under a cluster domain');
  // No top-level domain is numeric: this catches IPv4 literals in every notation (127.1, 0x7f.1, 2130706433).
  if (/^(\d+|0x[0-9a-f]+)$/.test(labels[labels.length - 1] as string)) throw bad('must be a domain name, not an IP address');
  return { address, cluster: labels.slice(1).join('.') };
}
