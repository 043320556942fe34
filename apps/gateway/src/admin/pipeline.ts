// The admin listener's pipeline: the operator is whoever presents ADMIN_TOKEN as a bearer token. The
// secret is compared in constant time (both sides hashed first, so their lengths cannot leak either).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, clientOf, type AnyRoute, type Pipeline, type TrustProxy } from '@pds/http';
import type { AdminAccess, AdminContext } from './route';

const digest = (text: string) => createHash('sha256').update(text).digest();

export class AdminPipeline implements Pipeline<AdminContext> {
  private readonly expected: Buffer;

  constructor(
    adminToken: string,
    private readonly trust: TrustProxy,
  ) {
    this.expected = digest(adminToken);
  }

  async prepare(req: IncomingMessage, _res: ServerResponse, route: AnyRoute): Promise<AdminContext> {
    const client = clientOf(req, this.trust);
    if ((route.access as AdminAccess) === 'admin' && !this.isAdmin(req.headers.authorization)) {
      throw ApiError.notAuthenticated('An admin token is required: Authorization: Bearer <ADMIN_TOKEN>');
    }
    return { client };
  }

  private isAdmin(authorization: string | undefined): boolean {
    const match = /^Bearer +(\S+)\s*$/i.exec(authorization ?? '');
    return match !== null && timingSafeEqual(digest(match[1]!), this.expected);
  }
}
