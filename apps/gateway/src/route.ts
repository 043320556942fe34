// The gateway's words for who may call a route, what the pipeline (pipeline.ts) hands each handler for
// them, and `route()`, which declares a route with its handler's types worked out from its access.
import type { z } from 'zod';
import type { IncomingMessage } from 'node:http';
import type { Client, DescribeAccess, Reply, RouteDef } from '@pds/http';
import type { ReadNote } from './events/reads';
import type { Caller } from './context';
import type { ResolvedInstance } from './instances/registry';

/**
 * - `public`: any Host, no instance, no token (probes, the document, sign-up);
 * - `instance`: an instance's address; the handler reads any credentials itself (log-in, validate, blobs);
 * - `anyone`: an instance's address, with or without a token (a token sent is checked: public content);
 * - `token`: any account of the instance (owner, user or app); the service decides finer rules;
 * - `owner`: the owner's own login token;
 * - `app`: an application's token;
 * - `dex`: a dex-signed service token for this instance (app pushes).
 */
export type Access = 'public' | 'instance' | 'anyone' | 'token' | 'owner' | 'app' | 'dex';

interface PublicContext {
  client: Client;
}
interface InstanceContext extends PublicContext {
  tenant: ResolvedInstance;
}

export type Context<A extends Access> = A extends 'public'
  ? PublicContext
  : A extends 'instance' | 'dex'
    ? InstanceContext
    : A extends 'anyone'
      ? InstanceContext & { caller?: Caller }
      : InstanceContext & { caller: Caller };

/** What the gateway's pipeline reads of a route beyond the shared declaration. */
export interface GatewayFlags {
  /**
   * Part of the flow of an instance its owner is closing (instances/state.ts): served to the owner
   * (the handler of an `instance` route checks who logs in), where every other call answers 410.
   */
  whileClosing?: true;
  /**
   * A read the owner's activity log keeps (events/reads.ts): what was read, from the parsed input and
   * the answer (undefined when the call was refused: a failed log-in). Undefined: nothing to note.
   */
  read?: (input: ReadInput, reply: Reply | undefined) => ReadNote | undefined;
}

/** What a route's `read` sees of its call. */
export interface ReadInput {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  params: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query: any;
  req: IncomingMessage;
  caller?: Caller;
}

export type GatewayRoute<A extends Access = Access> = RouteDef<A, Context<A>, any, any, any> & GatewayFlags; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Declares a route; the handler's context, params, query and body are typed from the declaration. */
export function route<
  A extends Access,
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(declaration: RouteDef<A, Context<A>, P, Q, B> & GatewayFlags): GatewayRoute<A> {
  return declaration as GatewayRoute<A>;
}

const NOTES: Record<Access, ReturnType<DescribeAccess>> = {
  public: { auth: 'none' },
  instance: { auth: 'none' },
  anyone: { auth: 'none', note: 'A token is optional; one that is sent must be valid.' },
  token: { auth: 'instanceToken' },
  owner: { auth: 'instanceToken', note: 'Owner only.' },
  app: { auth: 'instanceToken', note: "An application's token only." },
  dex: { auth: 'dexServiceToken' },
};

export const describeAccess: DescribeAccess = (access) => NOTES[access as Access];
