// The admin listener's pipeline: who is calling. The CLI and scripts send `Authorization: Bearer
// <ADMIN_TOKEN>`, compared in constant time (both sides hashed first, so their lengths cannot leak
// either); the console sends its session cookie (@pds/http ConsoleSessions). A route that changes
// something is recorded in the audit with who asked and what they were answered.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ApiError,
  clientOf,
  type AnyRoute,
  type Audit,
  type ConsoleSessions,
  type Pipeline,
  type Reply,
  type RouteInput,
  type TrustProxy,
} from '@pds/http';
import type { AdminAccess, AdminContext, AdminRoute } from './route';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether a candidate is ADMIN_TOKEN, compared in constant time. */
export function adminTokenCheck(adminToken: string): (candidate: string) => boolean {
  const expected = digest(adminToken);
  return (candidate) => timingSafeEqual(digest(candidate), expected);
}

/** Who a console log-in made with ADMIN_TOKEN, and every bearer call, acts as. */
export const TOKEN_ACTOR = 'admin-token';

export class AdminPipeline implements Pipeline<AdminContext> {
  constructor(
    private readonly isAdminToken: (candidate: string) => boolean,
    private readonly trust: TrustProxy,
    private readonly sessions: ConsoleSessions,
    private readonly audit: Audit,
  ) {}

  async prepare(req: IncomingMessage, _res: ServerResponse, route: AnyRoute): Promise<AdminContext> {
    const client = clientOf(req, this.trust);
    const access = route.access as AdminAccess;
    if (access === 'public') return { client };
    const authorization = req.headers.authorization;
    if (authorization !== undefined) {
      const match = /^Bearer +(\S+)\s*$/i.exec(authorization);
      if (!match || !this.isAdminToken(match[1]!))
        throw ApiError.notAuthenticated('An admin token is required: Authorization: Bearer <ADMIN_TOKEN>');
      return { client, actor: TOKEN_ACTOR };
    }
    const session = await this.sessions.current(req, client);
    if (!session) throw ApiError.notAuthenticated('Log in to the console, or send Authorization: Bearer <ADMIN_TOKEN>');
    if (access === 'root' && session.actor !== TOKEN_ACTOR) throw ApiError.forbidden('Only ADMIN_TOKEN manages operator accounts');
    return { client, actor: session.actor };
  }

  handle(context: AdminContext, route: AnyRoute, input: RouteInput<AdminContext, unknown, unknown, unknown>): Promise<Reply | undefined> {
    const note = (route as AdminRoute).audit;
    if (!note || !context.actor) return route.handle(input);
    return this.audit.around(note, { actor: context.actor, client: context.client.ip }, input, () => route.handle(input));
  }
}
