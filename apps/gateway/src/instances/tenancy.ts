import type { Request, RequestHandler } from 'express';
import { ApiError } from '@pds/http';
import type { InstanceRegistry } from './registry';

/** The host a request was sent to: lower-case, port stripped; X-Forwarded-Host only behind a trusted proxy. */
export function requestHost(req: Request): string {
  return (req.hostname ?? '').toLowerCase().replace(/\.$/, '');
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
