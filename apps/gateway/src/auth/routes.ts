// Tokens: login by headers or query, validation, the instance root and its public key (CONTRACT §1).
import { Router, type Request, type Response } from 'express';
import { ApiError, assertStorable } from '@pds/http';
import { TokenRefused } from '@pds/tokens';
import { tenantOf } from '../context';
import type { LoginService } from './login';
import { requestToken } from './middleware';
import type { AuthService } from './service';

export const API_VERSION = 'v2.6';

/** Header values may be URL-encoded (as the original system's clients send them). */
function decodeCredential(value: string, field: string): string {
  let decoded = value;
  try {
    decoded = decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    // Not URL-encoded after all: the value is taken as sent.
  }
  assertStorable(decoded, field);
  return decoded;
}

function first(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function authRoutes(auth: AuthService, logins: LoginService): Router {
  const router = Router();

  async function login(req: Request, res: Response, username: string | undefined, password: string | undefined) {
    const credentials = {
      username: username && decodeCredential(username, 'username'),
      password: password && decodeCredential(password, 'password'),
    };
    const result = await logins.login(tenantOf(req), { ip: req.ip ?? 'unknown' }, credentials);
    res.setHeader('X-Auth-Token', result.accessToken);
    res.json(result);
  }

  const tokenByHeaders = (req: Request, res: Response) =>
    login(req, res, first(req.get('username')), first(req.get('password')) ?? first(req.get('pass')));
  router.get('/users/access_token', tokenByHeaders);
  router.get('/user/access_token', tokenByHeaders);

  router.get('/users/access_token/validate', async (req, res) => {
    const token = requestToken(req);
    try {
      if (!token) throw new TokenRefused('malformed');
      await auth.authenticate(tenantOf(req), token);
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
      throw ApiError.notAuthenticated('The supplied authentication is invalid', { cause: error.reason });
    }
    res.json({ message: 'Authenticated' });
  });

  router.get('/', async (req, res) => {
    const tenant = tenantOf(req);
    const accessToken = first(req.query.access_token);
    if (accessToken) {
      try {
        const caller = await auth.authenticate(tenant, accessToken);
        const token = (await auth.refreshed(tenant, caller)) ?? accessToken;
        res.setHeader('X-Auth-Token', token);
        res.json({ accessToken: token, userId: caller.user.id });
        return;
      } catch (error) {
        if (error instanceof TokenRefused) throw ApiError.notAuthenticated();
        throw error;
      }
    }
    const username = first(req.query.username);
    if (username) return login(req, res, username, first(req.query.pass) ?? first(req.query.password));
    res.json({ instance: tenant.instance.address, apiVersion: API_VERSION, publicKey: '/publickey' });
  });

  router.get('/publickey', (req, res) => {
    res.type('text/plain').send(tenantOf(req).instance.publicKeyPem);
  });

  return router;
}
