// OpenAPI 3.1 made from the route table (routing/route.ts): each operation from its route's one
// declaration, with the zod schemas that validate its input, so the document cannot drift from the code.
import { z } from 'zod';
import { json, pathsOf, type AnyRoute, type RouteDef } from './routing/route';

/** How a caller proves who it is; each maps to a security scheme of the document (or none). */
export type ApiAuth = 'none' | 'instanceToken' | 'dexServiceToken' | 'adminToken';

/** How an application's access words read in the document: the scheme, and a sentence for the description. */
export type DescribeAccess = (access: string) => { auth: ApiAuth; note?: string };

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
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: "The cluster's ADMIN_TOKEN, on the admin listener (ADMIN_PORT) only.",
  },
} as const;

function parametersOf(op: AnyRoute, params: { name: string; wildcard: boolean }[]): unknown[] {
  const path = params.map(({ name, wildcard }) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
    ...(wildcard ? { description: 'One or more path segments joined by "/"' } : {}),
  }));
  const querySchema = (op.query as z.ZodObject | undefined) ?? op.documents?.query;
  const query = querySchema ? queryParameters(querySchema) : [];
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

function responsesOf(op: AnyRoute): Record<string, unknown> {
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
    const headers = response.headers
      ? Object.fromEntries(
          Object.entries(response.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
        )
      : undefined;
    responses[status] = { description: response.description, ...(headers ? { headers } : {}), ...(content ? { content } : {}) };
  }
  responses['4XX'] = {
    description: 'Refused: `{error, message}` says why (bad input, no or wrong token, not found, rate limited …)',
    content: errorContent,
  };
  responses['5XX'] = { description: 'A dependency is unavailable (503) or an unexpected error occurred', content: errorContent };
  return responses;
}

function operationObject(
  op: AnyRoute,
  params: { name: string; wildcard: boolean }[],
  operationId: string,
  access: ReturnType<DescribeAccess>,
): unknown {
  const body = (op.body as z.ZodType | undefined) ?? op.documents?.body;
  const description = [access.note, op.description].filter(Boolean).join(' ');
  const requestBody = body
    ? { required: true, content: { 'application/json': { schema: jsonSchemaOf(body, 'input') } } }
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
    ...(description ? { description } : {}),
    tags: [op.tag],
    security: access.auth === 'none' ? [] : [{ [access.auth]: [] }],
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

/** A reference to a path item, a JSON pointer in a URI fragment: `/things/{id}` → `#/paths/~1things~1%7Bid%7D`. */
const pathPointer = (path: string) => `#/paths/${encodeURIComponent(path.replace(/~/g, '~0').replace(/\//g, '~1'))}`;

interface Alias {
  op: AnyRoute;
  /** The OpenAPI path of the route's first path, which holds its operation. */
  primary: string;
  expressPath: string;
  access: ReturnType<DescribeAccess>;
}

/**
 * The whole OpenAPI 3.1 document for a route table (its hidden routes left out). A route's first path
 * holds its operation; a further path (an alias) whose every method is an alias of the same path is a
 * reference to that path item, so the document does not repeat it. Other aliases get their own copy.
 */
export function openApiDocument(info: ApiInfo, routes: readonly AnyRoute[], describe: DescribeAccess): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const used = new Set<string>();
  const aliases = new Map<string, Map<string, Alias>>();
  const twice = (op: AnyRoute, expressPath: string) => new Error(`OpenAPI: ${op.method.toUpperCase()} ${expressPath} is declared twice`);
  const add = (op: AnyRoute, expressPath: string, access: Alias['access']) => {
    const { path, params } = openApiPath(expressPath);
    const item = (paths[path] ??= {});
    if (item[op.method]) throw twice(op, expressPath);
    item[op.method] = operationObject(op, params, operationIdOf(op.method, path), access);
  };
  for (const op of routes) {
    if (op.hidden) continue;
    const access = describe(op.access);
    used.add(access.auth);
    const [first, ...others] = pathsOf(op) as [string, ...string[]];
    add(op, first, access);
    for (const expressPath of others) {
      const { path } = openApiPath(expressPath);
      const methods = aliases.get(path) ?? new Map<string, Alias>();
      if (methods.has(op.method)) throw twice(op, expressPath);
      aliases.set(path, methods.set(op.method, { op, primary: openApiPath(first).path, expressPath, access }));
    }
  }
  for (const [path, methods] of aliases) {
    const targets = new Set([...methods.values()].map((alias) => alias.primary));
    const [target] = targets;
    const same = targets.size === 1 && !paths[path] && Object.keys(paths[target!] ?? {}).length === methods.size;
    if (same) paths[path] = { $ref: pathPointer(target!) };
    else for (const { op, expressPath, access } of methods.values()) add(op, expressPath, access);
  }
  const securitySchemes = Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => used.has(name)));
  const sorted = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  return { openapi: '3.1.0', info, paths: sorted, components: { schemas: { Error: jsonSchemaOf(errorBody, 'output') }, securitySchemes } };
}

export const OPENAPI_PATH = '/api/openapi.json';

/**
 * `GET /api/openapi.json`: the document, built on first request (the table must be complete first, and
 * the route is part of it). The same for every Host, without a token.
 */
export function openApiRoute<A extends string>(access: A, document: () => Record<string, unknown>): RouteDef<A> {
  return {
    method: 'get',
    path: OPENAPI_PATH,
    access,
    tag: 'meta',
    summary: 'This document (OpenAPI 3.1), on any Host, without a token',
    responses: { 200: { description: 'The OpenAPI document', body: z.looseObject({ openapi: z.literal('3.1.0') }) } },
    handle: async () => json(document()),
  };
}
