// The original HAT's remaining routes that its clients (its web app, iOS and Android SDKs) call: the
// version, their action log, the (empty) list of SHE functions, and the public profile with the
// owner's routes to edit it. Shapes as those clients parse them (docs/hat-compat.md).
import { z } from 'zod';
import { json } from '@pds/http';
import { type Logger } from '@pds/runtime';
import { API_VERSION } from '../auth/routes';
import { recordBody } from '../data/routes';
import { route, type GatewayRoute } from '../route';
import { PROFILE_FIELDS, profileSchema, type ProfileService } from './profile';

const BASE = '/api/v2.6';
const tag = 'hat';

const actionBody = z.object({
  actionCode: z.string().trim().min(1).max(128),
  message: z.string().max(4096).optional(),
  logGroup: z.string().max(128).optional(),
});
const profileFields = z.object(
  Object.fromEntries(
    Object.entries(PROFILE_FIELDS).map(([group, fields]) => [group, z.object(Object.fromEntries(fields.map((f) => [f, z.string()])))]),
  ),
);
const ownProfile = {
  200: { description: 'The profile and its public fields', body: z.object({ profile: profileFields, published: z.array(z.string()) }) },
};

export function hatRoutes(profiles: ProfileService, logger: Logger): GatewayRoute[] {
  return [
    route({
      method: 'get',
      path: `${BASE}/version`,
      access: 'instance',
      tag,
      summary: 'The API version the instance answers',
      responses: { 200: { description: 'The version', body: z.object({ Version: z.string() }) } },
      handle: async () => json({ Version: API_VERSION }),
    }),
    route({
      method: 'post',
      path: `${BASE}/report-frontend-action`,
      access: 'token',
      tag,
      summary: "A client's report of what its user did (kept in the gateway's log)",
      body: actionBody,
      responses: { 200: { description: 'Logged', body: z.object({ message: z.string() }) } },
      async handle({ tenant, caller, body, req }) {
        // One bounded line: the client chose the words, so they are data, never the log's structure.
        logger.info(
          {
            reqId: req.id,
            instance: tenant.instance.address,
            application: caller.claims.application,
            actionCode: body.actionCode,
            logGroup: body.logGroup,
            message: body.message?.slice(0, 256),
          },
          'frontend action',
        );
        return json({ message: `${body.actionCode} logged` });
      },
    }),
    route({
      method: 'get',
      path: `${BASE}/she/function`,
      access: 'owner',
      tag,
      summary: 'The SHE functions installed: none (SHE is not part of this cluster)',
      responses: { 200: { description: 'An empty list', body: z.array(z.never()) } },
      handle: async () => json([]),
    }),
    route({
      method: 'get',
      path: `${BASE}/phata/profile`,
      access: 'anyone',
      tag,
      summary: "The owner's public profile: the values of the phata bundle ({notables, profile})",
      description: 'Nothing of the profile is public until the owner publishes fields (PUT /api/v2.6/profile, or a phata bundle).',
      responses: { 200: { description: 'Each property → its records', body: z.record(z.string(), z.array(recordBody)) } },
      handle: async ({ tenant }) => json(await profiles.publicProfile(tenant)),
    }),
    route({
      method: 'get',
      path: `${BASE}/profile`,
      access: 'owner',
      tag,
      summary: "The owner's profile (the newest rumpel/profile record) and which fields are public",
      responses: ownProfile,
      handle: async ({ tenant, caller }) => json(await profiles.own(tenant, caller)),
    }),
    route({
      method: 'put',
      path: `${BASE}/profile`,
      access: 'owner',
      tag,
      summary: 'Store the profile and choose its public fields',
      description: 'Writes a new rumpel/profile record and the phata bundle, as the original’s web and iOS apps do.',
      body: profileSchema,
      responses: ownProfile,
      handle: async ({ tenant, caller, body }) => json(await profiles.save(tenant, caller, body)),
    }),
  ];
}
