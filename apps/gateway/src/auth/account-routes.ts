// What an account does about its own security: change its password, reset a forgotten one by mail
// (HAT's /control/v2/auth paths and bodies), end all its sessions, and its second factor (TOTP).
import { z } from 'zod';
import { ApiError, json } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import type { PasswordService } from './password-service';
import { RESET_REQUESTED } from './password-service';
import type { AuthService } from './service';
import type { TotpService } from './totp';
import { API_VERSION } from './routes';

const tag = 'auth';
const message = (text: string) => z.object({ message: z.literal(text) });
const NEW_TOKEN = ' The X-Auth-Token response header carries a token for the session that goes on.';
const code = z.object({ code: z.string().min(1).max(64).describe('A current 6-digit code, or (to turn it off) a recovery code') });

export function accountRoutes(auth: AuthService, passwords: PasswordService, totp: TotpService): GatewayRoute[] {
  return [
    route({
      method: 'post',
      path: '/control/v2/auth/password',
      access: 'token',
      tag,
      summary: 'Change your own password',
      description:
        'Owner or user, with their own token. The new password follows the sign-up rule (400 otherwise); a missing or wrong ' +
        'current password is a 403 and changes nothing. Every token issued before the change is refused from then on.' +
        NEW_TOKEN,
      body: z.object({ password: z.string().max(256).optional(), newPassword: z.string().max(256) }),
      responses: { 200: { description: 'Changed', body: message('Password changed') } },
      async handle({ tenant, caller, body }) {
        const token = await passwords.change(tenant, caller, body);
        return json({ message: 'Password changed' }, 200, { 'X-Auth-Token': token });
      },
    }),
    route({
      method: 'post',
      path: '/control/v2/auth/passwordReset',
      access: 'instance',
      tag,
      summary: 'Mail the owner a link to choose a new password',
      description:
        'Answers the same whether or not the address is the owner’s; only then is a link mailed (valid 24 hours, once, ' +
        'and only the latest one). Rate limited per client address and per instance (429 with Retry-After).',
      body: z.object({ email: z.email('must be an e-mail address').max(254) }),
      responses: { 200: { description: 'Always the same answer', body: message(RESET_REQUESTED) } },
      async handle({ tenant, client, body }) {
        await passwords.requestReset(tenant, client, body.email);
        return json({ message: RESET_REQUESTED });
      },
    }),
    route({
      method: 'post',
      path: '/control/v2/auth/passwordreset/confirm/:token',
      access: 'instance',
      tag,
      summary: 'Choose a new password with a mailed link',
      description:
        'An unknown, used or expired link is a 401. Every token issued before the reset is refused from then on. ' +
        'Rate limited per client address, and per instance for the addresses whose links failed (429 with Retry-After).' +
        NEW_TOKEN,
      params: z.object({ token: z.string().max(256) }),
      body: z.object({ newPassword: z.string().max(256) }),
      responses: { 200: { description: 'The password is set', body: message('Password reset') } },
      async handle({ tenant, client, params, body }) {
        const token = await passwords.confirmReset(tenant, client, params.token, body.newPassword);
        return json({ message: 'Password reset' }, 200, { 'X-Auth-Token': token });
      },
    }),
    route({
      method: 'post',
      path: `/api/${API_VERSION}/auth/logout-everywhere`,
      access: 'token',
      tag,
      summary: 'End every session of your account',
      description:
        'Owner or user, with their own token: every token of the account issued until now, this one too, is refused on every gateway within a second.',
      responses: { 200: { description: 'Done', body: message('Logged out everywhere') } },
      async handle({ tenant, caller }) {
        if (caller.claims.accessScope === 'application') throw ApiError.forbidden('An application has no sessions to end');
        await auth.endSessions(tenant, caller.user.id);
        return json({ message: 'Logged out everywhere' });
      },
    }),
    route({
      method: 'get',
      path: `/api/${API_VERSION}/auth/totp`,
      access: 'token',
      tag,
      summary: 'Whether your account has two-factor authentication on',
      responses: { 200: { description: 'State', body: z.object({ enabled: z.boolean(), recoveryCodesLeft: z.number().int() }) } },
      handle: async ({ tenant, caller }) => json(await totp.status(tenant, caller)),
    }),
    route({
      method: 'post',
      path: `/api/${API_VERSION}/auth/totp/enrol`,
      access: 'token',
      tag,
      summary: 'Begin two-factor authentication: a new secret to scan',
      description: 'The secret is in force only once confirmed with a code. 409 while two-factor authentication is on.',
      responses: {
        200: {
          description: 'The secret, as text, as an otpauth:// URI and as a QR code of that URI (SVG markup)',
          body: z.object({ secret: z.string(), uri: z.string(), qrCode: z.string() }),
        },
      },
      handle: async ({ tenant, caller }) => json(await totp.enrol(tenant, caller)),
    }),
    route({
      method: 'post',
      path: `/api/${API_VERSION}/auth/totp/confirm`,
      access: 'token',
      tag,
      summary: 'Turn two-factor authentication on with a first code',
      description: 'Answers the ten recovery codes, each good once in place of a code; they are not shown again.',
      body: code,
      responses: { 200: { description: 'On', body: z.object({ recoveryCodes: z.array(z.string()) }) } },
      handle: async ({ tenant, caller, body }) => json(await totp.confirm(tenant, caller, body.code)),
    }),
    route({
      method: 'post',
      path: `/api/${API_VERSION}/auth/totp/disable`,
      access: 'token',
      tag,
      summary: 'Turn two-factor authentication off',
      body: code,
      responses: { 200: { description: 'Off', body: message('Two-factor authentication is off') } },
      async handle({ tenant, caller, body }) {
        await totp.disable(tenant, caller, body.code);
        return json({ message: 'Two-factor authentication is off' });
      },
    }),
  ];
}
