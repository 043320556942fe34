// A console's log-in, the same for every console (the operator's, dex's administrators'): the client's
// attempts are rate-limited (a success gives its attempt back), the credential is checked, and the
// attempt is recorded in the audit whatever its outcome, with how the person logged in; only then is the
// session started. What the credential is, and who it names, is each console's own (`LogInAttempt`).
import { toApiError } from './middleware';
import type { Audit } from './audit';
import type { ConsoleSessions } from './console-session';
import { limitedAddress, type RateLimit } from './rate-limit';
import type { Client } from './routing/request';

export interface LogInAttempt {
  /** Who the attempt says it is, as the audit records it (also when refused). */
  actor: string;
  /** How: `password`, `admin-token`, `owner-token`… (recorded, never the secret itself). */
  method: string;
  /** Checks the credential: resolves when it is accepted, throws the refusal's ApiError otherwise. */
  accept(): Promise<void>;
}

export class ConsoleLogIn {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly audit: Audit,
    private readonly limit: RateLimit,
  ) {}

  /** The session of an accepted attempt: its Set-Cookie value and when it ends. */
  async logIn(attempt: LogInAttempt, client: Client): Promise<{ setCookie: string; actor: string; expiresAt: Date }> {
    await this.limit.consume(limitedAddress(client.ip));
    const entry = { actor: attempt.actor, client: client.ip, action: 'session.create', details: { method: attempt.method } };
    try {
      await attempt.accept();
    } catch (error) {
      await this.audit.record({ ...entry, status: toApiError(error).status });
      throw error;
    }
    await this.limit.refund(limitedAddress(client.ip));
    const { setCookie, expiresAt } = await this.sessions.start(attempt.actor, client);
    await this.audit.record({ ...entry, status: 200 });
    return { setCookie, actor: attempt.actor, expiresAt };
  }
}
