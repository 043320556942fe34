import type { Request, RequestHandler } from 'express';
import { ApiError } from '@pds/http';
import type { InstanceRegistry } from './registry';

/** The host a request was sent to: lower-case, port stripped; X-Forwarded-Host only behind a trusted proxy. */
export function requestHost(req: Request): string {
  return instanceAddress(req.hostname ?? '');
}

/** The instance address a Host header names (`Alice.pds.example.:8080` → `alice.pds.example`). */
export function addressOfHost(host: string): string {
  // An IPv6 literal ([::1]:8080) has colons of its own: the port follows its closing bracket.
  const port = host.indexOf(':', host.startsWith('[') ? host.indexOf(']') : 0);
  return instanceAddress(port === -1 ? host : host.slice(0, port));
}

function instanceAddress(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

/** Resolves the instance from the Host before anything else; an unknown host is a 404. */
export function resolveTenant(registry: InstanceRegistry): RequestHandler {
  return async (req, _res, next) => {
    const host = requestHost(req);
    const resolved = host ? await registry.resolve(host) : null;
    if (!resolved) throw ApiError.notFound(`There is no instance at ${host || 'this address'}`);
    req.tenant = resolved;
    next();
  };
}
