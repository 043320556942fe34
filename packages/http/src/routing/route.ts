// One declaration per route: method, path, who may call it, the zod schemas of its input and output,
// and its handler. The express route, the fast dispatcher's entry and the OpenAPI operation are all
// made from it (express.ts, dispatcher.ts, ../openapi.ts); nothing about a route is written twice.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParsedUrlQuery } from 'node:querystring';
import type { z } from 'zod';

/** `head` and `options` for protocols that define them (tus); a `get` route answers HEAD too, through express. */
export type HttpMethod = 'get' | 'post' | 'put' | 'delete' | 'patch' | 'head' | 'options';

export interface ApiResponse {
  description: string;
  /** The JSON body (zod, output side). Omit for an empty or non-JSON body. */
  body?: z.ZodType;
  /** A non-JSON body, e.g. `text/plain` or `application/octet-stream`. */
  contentType?: string;
  /** Headers the answer carries that a client reads (by name, what each says). */
  headers?: Record<string, string>;
}

export interface ApiHeader {
  name: string;
  description: string;
  required?: boolean;
}

/** What a handler answers; the renderer (render.ts) writes it the same way for both dispatchers. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** A JSON body. */
  json?: unknown;
  /** A body of another type (`text/plain; charset=utf-8`, a page). */
  text?: { type: string; body: string };
  /**
   * A JSON body already written: records as the database keeps or was given their JSON, sent without
   * parsing and printing them again. `items`: how many records it holds.
   */
  jsonText?: { body: string; items: number };
}

export const json = (body: unknown, status = 200, headers?: Record<string, string>): Reply => ({ status, json: body, headers });
export const text = (type: string, body: string, headers?: Record<string, string>): Reply => ({
  status: 200,
  text: { type, body },
  headers,
});
export const jsonText = (body: string, items: number, status = 200): Reply => ({ status, jsonText: { body, items } });
/** Location alone: a redirect body that no client reads is not worth negotiating. */
export const redirect = (location: string, status = 303): Reply => ({ status, headers: { Location: location } });

/** What a handler receives: the pipeline's context, the parsed input, and the request itself for streams. */
export type RouteInput<Ctx, P, Q, B> = Ctx & {
  params: P;
  query: Q;
  body: B;
  req: IncomingMessage;
  res: ServerResponse;
};

/** A schema's output; without one, what the request carried (path parameters, or the parsed query). */
type Output<S, Raw> = S extends z.ZodType ? z.output<S> : Raw;

/**
 * A route. `Access` is the application's vocabulary of who may call (the pipeline enforces it, the
 * OpenAPI document describes it); `Ctx` is what the pipeline hands the handler for that access.
 */
export interface RouteDef<
  Access extends string = string,
  Ctx = unknown,
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: HttpMethod;
  /** Express path syntax (`/api/v2.6/files/file/:fileId`); several when the route has aliases. */
  path: string | readonly string[];
  access: Access;
  summary: string;
  tag: string;
  description?: string;
  /** Path parameters, parsed after access is decided: a stranger learns nothing, not even which ids are valid. */
  params?: P;
  query?: Q;
  /** The JSON body; a route without one still gets a JSON body it was sent, unvalidated, as `body`. */
  body?: B;
  /**
   * Shapes the handler checks by hand (bounded walks with their own messages): described in the
   * document, not validated by the pipeline.
   */
  documents?: { query?: z.ZodObject; body?: z.ZodType };
  /** A body that is not JSON, streamed by the handler from `req` (the local store's uploads). */
  rawBody?: { contentType: string; description: string };
  headers?: ApiHeader[];
  responses: Record<number, ApiResponse>;
  /** May the fast dispatcher serve it (default true)? Express serves it either way. */
  fast?: boolean;
  /** Left out of the OpenAPI document (pages for browsers). */
  hidden?: boolean;
  /** The answer, or undefined when the handler wrote the response itself (streams). */
  handle(
    input: RouteInput<Ctx, Output<P, Record<string, string>>, Output<Q, ParsedUrlQuery>, Output<B, unknown>>,
  ): Promise<Reply | undefined>;
}

/** Any route, whatever its input types: what tables, dispatchers and documents hold. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute<Access extends string = string> = RouteDef<Access, any, any, any, any>;

export const pathsOf = (route: AnyRoute): readonly string[] => (typeof route.path === 'string' ? [route.path] : route.path);
