// Tokens: login by headers or query, validation, the instance root and its public key (CONTRACT §1).
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { ApiError, assertStorable, json, text } from '@pds/http';
import { TokenRefused } from '@pds/tokens';
import type { ConsolePages } from '../console';
import { wantsPage } from '../console';
import type { ResolvedInstance } from '../instances/registry';
import { requireOpenTo } from '../instances/state';
import { requestToken } from '../pipeline';
import { route, type GatewayRoute } from '../route';
import { loginTried } from '../events/read-notes';
import type { LoginService } from './login';
import type { AuthService } from './service';

export const API_VERSION = 'v2.6';

const tokenBody = z.object({ accessToken: z.string(), userId: z.uuid() });
const credentials = [
  { name: 'username', description: 'Account name (URI-encoded when it holds non-ASCII characters)', required: true },
  { name: 'password', description: 'Password (`pass` is accepted too); URI-encoded when it holds non-ASCII characters', required: true },
  { name: 'X-Totp', description: 'The current second-factor code (or a recovery code), when the account has two-factor authentication on' },
];

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

export function authRoutes(auth: AuthService, logins: LoginService, pages: ConsolePages | undefined): GatewayRoute[] {
  async function login(tenant: ResolvedInstance, ip: string, req: IncomingMessage, username?: string, password?: string) {
    const credentials = {
      username: username && decodeCredential(username, 'username'),
      password: password && decodeCredential(password, 'password'),
      totp: header(req, 'x-totp'),
    };
    const result = await logins.login(tenant, { ip }, credentials);
    return json(result, 200, { 'X-Auth-Token': result.accessToken });
  }
  const header = (req: IncomingMessage, name: string) => first(req.headers[name]);

  return [
    route({
      method: 'get',
      path: ['/users/access_token', '/user/access_token'],
      access: 'instance',
      // The owner logs in to a closing instance (to stop the closing); LoginService refuses everyone else.
      whileClosing: true,
      tag: 'auth',
      summary: 'Log in with username and password headers',
      description:
        'Rate limited per client and instance, and per account for the addresses that failed on it (429 with Retry-After). ' +
        'The token is also in the X-Auth-Token response header. ' +
        'With two-factor authentication on, a password alone gets 401 with a message asking for the code in X-Totp.',
      headers: credentials,
      responses: { 200: { description: 'A token for the account', body: tokenBody } },
      read: loginTried,
      handle: ({ tenant, client, req }) =>
        login(tenant, client.ip, req, header(req, 'username'), header(req, 'password') ?? header(req, 'pass')),
    }),
    route({
      method: 'get',
      path: '/users/access_token/validate',
      access: 'instance',
      tag: 'auth',
      summary: 'Check a token',
      description: 'Without a valid token: 401 with the message "The supplied authentication is invalid" and a `cause`.',
      headers: [{ name: 'X-Auth-Token', description: 'The token to check', required: true }],
      responses: { 200: { description: 'The token is valid', body: z.object({ message: z.literal('Authenticated') }) } },
      async handle({ tenant, req, query }) {
        // Judged here, not by the pipeline: a refusal must say why.
        const token = requestToken(req, query);
        try {
          if (!token) throw new TokenRefused('malformed');
          await auth.authenticate(tenant, token);
        } catch (error) {
          if (!(error instanceof TokenRefused)) throw error;
          throw ApiError.notAuthenticated('The supplied authentication is invalid', { cause: error.reason });
        }
        return json({ message: 'Authenticated' });
      },
    }),
    route({
      method: 'get',
      path: '/',
      access: 'instance',
      // The owner's way into a closing instance: the console, and its log-in.
      whileClosing: true,
      tag: 'auth',
      summary: 'Instance root: refresh a token, log in by query, or describe the instance',
      description: 'A browser that asks for HTML without credentials gets the web console instead.',
      // Read by hand below (the original's query forms), so this object only documents them.
      documents: {
        query: z.object({
          access_token: z.string().optional().describe('A token to refresh'),
          username: z.string().optional(),
          pass: z.string().optional(),
          password: z.string().optional(),
        }),
      },
      responses: {
        200: {
          description: 'A (refreshed) token, or the instance description when no credentials are given',
          body: z.union([tokenBody, z.object({ instance: z.string(), apiVersion: z.string(), publicKey: z.string() })]),
        },
      },
      async handle({ tenant, client, req, query }) {
        const accessToken = first(query.access_token);
        if (accessToken) {
          try {
            const caller = await auth.authenticate(tenant, accessToken);
            requireOpenTo(tenant, caller.user);
            const token = (await auth.refreshed(tenant, caller)) ?? accessToken;
            return json({ accessToken: token, userId: caller.user.id }, 200, { 'X-Auth-Token': token });
          } catch (error) {
            if (error instanceof TokenRefused) throw ApiError.notAuthenticated();
            throw error;
          }
        }
        const username = first(query.username);
        if (username) return login(tenant, client.ip, req, username, first(query.pass) ?? first(query.password));
        if (pages && wantsPage(req, query)) return pages.instancePage(tenant);
        return json({ instance: tenant.instance.address, apiVersion: API_VERSION, publicKey: '/publickey' });
      },
    }),
    route({
      method: 'get',
      path: '/publickey',
      access: 'instance',
      tag: 'auth',
      summary: "The instance's RSA public key (PEM) that verifies its tokens",
      responses: { 200: { description: 'PEM', contentType: 'text/plain' } },
      handle: async ({ tenant }) => text('text/plain; charset=utf-8', tenant.instance.publicKeyPem),
    }),
  ];
}
