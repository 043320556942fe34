// OpenAPI 3.1 built from the zod schemas that validate requests, so the document cannot drift from
// the rules. Each feature lists its operations beside its routes (an `api.ts`); an app joins the lists.
import { Router } from 'express';
import { z } from 'zod';

export type HttpMethod = 'get' | 'post' | 'put' | 'delete' | 'patch';

/** How a caller proves who it is; each maps to a security scheme of the document (or none). */
export type ApiAuth = 'none' | 'instanceToken' | 'dexServiceToken';

export interface ApiResponse {
  description: string;
  /** The JSON body (zod, output side). Omit for an empty or non-JSON body. */
  body?: z.ZodType;
  /** A non-JSON body, e.g. `text/plain` or `application/octet-stream`. */
  contentType?: string;
}

export interface ApiHeader {
  name: string;
  description: string;
  required?: boolean;
}

export interface ApiOperation {
  method: HttpMethod;
  /** Express path syntax as mounted (`/api/v2.6/files/file/:fileId`); several when the route has aliases. */
  path: string | string[];
  summary: string;
  tag: string;
  auth: ApiAuth;
  description?: string;
  /** The JSON body schema that the route validates with (input side). */
  body?: z.ZodType;
  /** A body that is not JSON (the local store's upload address takes raw bytes). */
  rawBody?: { contentType: string; description: string };
  /** The query schema that the route validates with: one parameter per property. */
  query?: z.ZodObject;
  headers?: ApiHeader[];
  /** Success (and notable error) responses. Every operation also gets the shared error body for 4XX and 5XX. */
  responses: Record<number, ApiResponse>;
}

export interface ApiInfo {
  title: string;
  version: string;
  description: string;
}

/** The body of every error response (`ApiError`, rendered by `errorHandler`). */
export const errorBody = z.looseObject({
  error: z.string().describe('HTTP reason phrase, e.g. "Bad Request"'),
  message: z.string().describe('What went wrong, naming the field where one is at fault'),
});

type JsonSchema = Record<string, unknown>;

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of one side of a zod schema. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // `unrepresentable: 'any'`: a transform or refinement cannot be expressed; the shape around it still is.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
  return rest;
}

/** `/files/:fileId/*rest` → `/files/{fileId}/{rest}`, and the names of its parameters. */
export function openApiPath(expressPath: string): { path: string; params: { name: string; wildcard: boolean }[] } {
  const params: { name: string; wildcard: boolean }[] = [];
  const path = expressPath.replace(/([:*])([A-Za-z_$][\w$]*)/g, (_match, kind: string, name: string) => {
    params.push({ name, wildcard: kind === '*' });
    return `{${name}}`;
  });
  return { path, params };
}

const SECURITY_SCHEMES = {
  instanceToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Auth-Token',
    description: 'A token the instance issued (GET /users/access_token, sign-up, or an app token).',
  },
  dexServiceToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Auth-Token',
    description: "A dex-signed service token (dex → instance app pushes), or for dex itself an administrator's instance token.",
  },
} as const;

function parametersOf(op: ApiOperation, params: { name: string; wildcard: boolean }[]): unknown[] {
  const path = params.map(({ name, wildcard }) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
    ...(wildcard ? { description: 'One or more path segments joined by "/"' } : {}),
  }));
  const query = op.query ? queryParameters(op.query) : [];
  const headers = (op.headers ?? []).map((h) => ({
    name: h.name,
    in: 'header',
    required: h.required ?? false,
    description: h.description,
    schema: { type: 'string' },
  }));
  return [...path, ...query, ...headers];
}

function queryParameters(query: z.ZodObject): unknown[] {
  const schema = jsonSchemaOf(query, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: schema.required?.includes(name) ?? false,
    schema: property,
  }));
}

function responsesOf(op: ApiOperation): Record<string, unknown> {
  const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(op.responses)) {
    const content = response.body
      ? { 'application/json': { schema: jsonSchemaOf(response.body, 'output') } }
      : response.contentType
        ? { [response.contentType]: { schema: { type: 'string' } } }
        : Number(status) >= 400
          ? errorContent
          : undefined;
    responses[status] = { description: response.description, ...(content ? { content } : {}) };
  }
  responses['4XX'] = {
    description: 'Refused: `{error, message}` says why (bad input, no or wrong token, not found, rate limited …)',
    content: errorContent,
  };
  responses['5XX'] = { description: 'A dependency is unavailable (503) or an unexpected error occurred', content: errorContent };
  return responses;
}

function operationObject(op: ApiOperation, params: { name: string; wildcard: boolean }[], operationId: string): unknown {
  const requestBody = op.body
    ? { required: true, content: { 'application/json': { schema: jsonSchemaOf(op.body, 'input') } } }
    : op.rawBody
      ? {
          required: true,
          description: op.rawBody.description,
          content: { [op.rawBody.contentType]: { schema: { type: 'string', contentMediaType: op.rawBody.contentType } } },
        }
      : undefined;
  const parameters = parametersOf(op, params);
  return {
    operationId,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    security: op.auth === 'none' ? [] : [{ [op.auth]: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: responsesOf(op),
  };
}

/** `put /api/v2.6/files/file/{fileId}/complete` → `putApiV26FilesFileFileIdComplete`: stable and unique per path. */
function operationIdOf(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method + (words.length ? words : ['root']).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/** The whole OpenAPI 3.1 document for a list of operations. */
export function openApiDocument(info: ApiInfo, operations: readonly ApiOperation[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    for (const expressPath of [op.path].flat()) {
      const { path, params } = openApiPath(expressPath);
      const item = (paths[path] ??= {});
      if (item[op.method]) throw new Error(`OpenAPI: ${op.method.toUpperCase()} ${expressPath} is described twice`);
      item[op.method] = operationObject(op, params, operationIdOf(op.method, path));
    }
  }
  const used = new Set<string>(operations.map((op) => op.auth));
  const securitySchemes = Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => used.has(name)));
  const sorted = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  return { openapi: '3.1.0', info, paths: sorted, components: { schemas: { Error: jsonSchemaOf(errorBody, 'output') }, securitySchemes } };
}

export const OPENAPI_PATH = '/api/openapi.json';

/** The document describes its own route too. */
export const openApiOperation: ApiOperation = {
  method: 'get',
  path: OPENAPI_PATH,
  tag: 'meta',
  auth: 'none',
  summary: 'This document (OpenAPI 3.1), on any Host, without a token',
  responses: { 200: { description: 'The OpenAPI document', body: z.looseObject({ openapi: z.literal('3.1.0') }) } },
};

/** `GET /api/openapi.json`, built once. Mount it before tenancy: the document is the same for every Host. */
export function openApiRoutes(document: Record<string, unknown>): Router {
  const router = Router();
  router.get(OPENAPI_PATH, (_req, res) => {
    res.json(document);
  });
  return router;
}

const NOT_API = Symbol.for('pds.notApi');

/**
 * Marks a router or handler as outside the API document (pages and static assets for browsers, not
 * JSON for clients). The route-coverage tests skip what carries the mark and require everything else.
 */
export function notApi<T extends object>(handler: T): T {
  Object.defineProperty(handler, NOT_API, { value: true });
  return handler;
}

export const isNotApi = (handler: unknown): boolean =>
  typeof handler === 'function' && (handler as unknown as Record<symbol, unknown>)[NOT_API] === true;
