// The request pipeline both dispatchers run for a declared route: the application's pipeline (who is
// calling, and may they), then the input (path, query, body) parsed by the route's own schemas, then the
// handler, then the one renderer. A refusal is answered where it is found, once.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import type { Logger } from '@pds/runtime';
import { parseInput } from '../validate';
import { sendError, sendReply } from './render';
import { checkTarget, readJsonBody, targetOf } from './request';
import type { AnyRoute, Reply, RouteInput } from './route';

/** A pipeline's answer for a request that is not this route's to serve (express then tries what follows). */
export const PASS: unique symbol = Symbol('pass to the next handler');

/**
 * The application's part of the pipeline (the gateway: tenant from Host, token, caller, refreshed
 * token, access). Throws an ApiError to refuse; returns what the route's handler gets besides its input.
 */
export interface Pipeline<Ctx = unknown> {
  prepare(req: IncomingMessage, res: ServerResponse, route: AnyRoute, query: ParsedUrlQuery): Promise<Ctx | typeof PASS>;
  /**
   * Runs the route's handler on its parsed input, and whatever the application does around it (the
   * gateway: notes what it read). Without it the handler runs alone.
   */
  handle?(context: Ctx, route: AnyRoute, input: RouteInput<Ctx, unknown, unknown, unknown>): Promise<Reply | undefined>;
}

/** Serves `req` with `route`; resolves false when the pipeline passed it on, unanswered. */
export async function serveRoute(
  route: AnyRoute,
  /** Which of its paths matched: the metrics label. */
  template: string,
  pipeline: Pipeline,
  req: IncomingMessage,
  res: ServerResponse,
  params: Record<string, unknown>,
  logger: Logger,
): Promise<boolean> {
  req.routeTemplate = template;
  try {
    const { path, query } = targetOf(req);
    checkTarget(path, query);
    const context = await pipeline.prepare(req, res, route, query);
    if (context === PASS) return false;
    // The context's fields last: on Node 20's V8 a property written after a spread in an object literal
    // takes the runtime's slow path; this one object cost the cheapest route a third of its CPU
    // (docs/performance.md, "Spreads on the request path").
    const input = {
      params: route.params ? parseInput(route.params, params, 'path') : params,
      query: route.query ? parseInput(route.query, query, 'query') : query,
      body: undefined as unknown,
      req,
      res,
      ...(context as object),
    };
    if (!route.rawBody) {
      const body = await readJsonBody(req);
      input.body = route.body ? parseInput(route.body, body ?? {}) : body;
    }
    // No closure per request: tsx names every function made at run time, which the profile showed.
    const reply = await (pipeline.handle ? pipeline.handle(context, route, input) : route.handle(input));
    if (reply) sendReply(res, reply);
  } catch (error) {
    sendError(res, error, logger);
  }
  return true;
}
