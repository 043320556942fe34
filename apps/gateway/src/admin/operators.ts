// Who may use the operator's console: log-in with an operator account's name and password, or with
// ADMIN_TOKEN itself, into a session cookie (ConsoleSessions); log-out; and the accounts, which only
// ADMIN_TOKEN manages (`pnpm admin operators …`). Every log-in, failed or not, is in the audit.
import type { ConsoleSessionRepository, OperatorRepository } from '@pds/db';
import { ApiError, type Client, type ConsoleLogIn, type ConsoleSessions } from '@pds/http';
import { type Clock, hashPassword, matchesStored, passwordProblem } from '@pds/tokens';
import type { IncomingMessage } from 'node:http';
import { TOKEN_ACTOR } from './pipeline';

export type LogIn = { name: string; password: string } | { adminToken: string };

export const operatorActor = (name: string) => `operator:${name}`;

export class OperatorService {
  constructor(
    private readonly operators: OperatorRepository,
    private readonly sessionRows: ConsoleSessionRepository,
    private readonly sessions: ConsoleSessions,
    private readonly logIns: ConsoleLogIn,
    private readonly isAdminToken: (candidate: string) => boolean,
    private readonly clock: Clock,
  ) {}

  /** A session for the operator (or the token's holder): its cookie; 401 alike for a wrong name or password. */
  logIn(input: LogIn, client: Client): Promise<{ setCookie: string; actor: string; expiresAt: Date }> {
    const withToken = 'adminToken' in input;
    return this.logIns.logIn(
      {
        actor: withToken ? TOKEN_ACTOR : operatorActor(input.name),
        method: withToken ? 'admin-token' : 'password',
        accept: async () => {
          const accepted = withToken ? this.isAdminToken(input.adminToken) : await this.passwordMatches(input.name, input.password);
          if (!accepted) throw ApiError.notAuthenticated('Wrong name or password');
        },
      },
      client,
    );
  }

  /** The actor of the request's console session; nothing without one (the console then shows its log-in). */
  async whoIs(req: IncomingMessage, client: Client): Promise<{ actor?: string }> {
    const session = await this.sessions.current(req, client);
    return session ? { actor: session.actor } : {};
  }

  /** Ends the request's session; the cookie that clears it. */
  logOut(req: IncomingMessage, client: Client): Promise<string> {
    return this.sessions.end(req, client);
  }

  list(): Promise<{ name: string; createdAt: Date }[]> {
    return this.operators.list();
  }

  async add(name: string, password: string): Promise<{ name: string; createdAt: Date }> {
    const problem = passwordProblem(password, [name]);
    if (problem) throw ApiError.badRequest(`password: ${problem}`);
    const createdAt = this.clock();
    if (!(await this.operators.create(name, await hashPassword(password), createdAt)))
      throw ApiError.conflict(`An operator ${name} exists already`);
    return { name, createdAt };
  }

  /** Removes the account and ends its sessions at once. */
  async remove(name: string): Promise<void> {
    if (!(await this.operators.remove(name))) throw ApiError.notFound(`There is no operator ${name}`);
    await this.sessionRows.removeActor(operatorActor(name));
  }

  /** The same time whether the account exists or not (matchesStored). */
  private async passwordMatches(name: string, password: string): Promise<boolean> {
    return matchesStored(password, (await this.operators.find(name))?.passwordHash);
  }
}
