import type { Request, RequestHandler } from 'express';
import { ApiError } from '@pds/http';
import { TokenRefused } from '@pds/tokens';
import { tenantOf } from '../context';
import type { AuthService } from './service';

export const TOKEN_HEADER = 'x-auth-token';

/** The token of a request: the X-Auth-Token header, or on GET the X-Auth-Token query parameter (for links). */
export function requestToken(req: Request): string | undefined {
  const header = req.get(TOKEN_HEADER);
  if (header) return header;
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const query = req.query['X-Auth-Token'] ?? req.query['x-auth-token'];
  return typeof query === 'string' && query ? query : undefined;
}

/**
 * Authenticates a request that carries a token; a request without one passes through anonymous
 * (routes decide whether that is enough). A refused token is a 401, never silently anonymous.
 */
export function authenticate(auth: AuthService): RequestHandler {
  return async (req, res, next) => {
    const token = requestToken(req);
    if (!token) return next();
    const tenant = tenantOf(req);
    try {
      req.caller = await auth.authenticate(tenant, token);
    } catch (error) {
      if (error instanceof TokenRefused) throw ApiError.notAuthenticated();
      throw error;
    }
    const fresh = await auth.refreshed(tenant, req.caller);
    if (fresh) res.setHeader('X-Auth-Token', fresh);
    next();
  };
}
