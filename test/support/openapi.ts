// Checks a route table against its OpenAPI document: which routes it declares, and whether a response
// matches what the document says about its operation and status.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import { openApiPath, pathsOf, type AnyRoute } from '@pds/http';

/** `GET /api/v2.6/files/file/{fileId}` for every route of a table, minus the hidden ones (pages). */
export function declaredRoutes(routes: readonly AnyRoute[]): string[] {
  const found = routes
    .filter((route) => !route.hidden)
    .flatMap((route) => pathsOf(route).map((path) => `${route.method.toUpperCase()} ${openApiPath(path).path}`));
  return [...new Set(found)].sort();
}

type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };
type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };

/** A path's item, following a `$ref` to another path's (how the document gives an alias path). */
function pathItem(doc: Doc, path: string): Record<string, Operation> | undefined {
  const item = doc.paths[path] as (Record<string, Operation> & { $ref?: string }) | undefined;
  if (!item?.$ref) return item;
  const target = decodeURIComponent(item.$ref.replace(/^#\/paths\//, ''))
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
  return doc.paths[target];
}

export function documentedRoutes(doc: Doc): string[] {
  return Object.keys(doc.paths)
    .flatMap((path) => Object.keys(pathItem(doc, path) ?? {}).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

/**
 * A checker that finds the documented operation for a supertest response (by its request's method and
 * path), picks the response for its status (or its 4XX/5XX range) and validates the body with ajv.
 * Returns the problems; an empty list means the response is as documented.
 */
export function responseChecker(doc: Doc): (res: Response) => string[] {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  addComponents(ajv, doc);
  const templates = Object.keys(doc.paths).map((path) => ({
    path,
    // A `{name}` is one segment, except a wildcard's last one (`{endpoint}` of the data tables), which may hold several.
    pattern: new RegExp(
      `^${path
        .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
        .replace(/\\?\{[^}]+\\?\}$/, '.+')
        .replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`,
    ),
  }));
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  return (res) => {
    const req = (res as unknown as { req: { method: string; path: string } }).req;
    const method = req.method.toLowerCase();
    const path = decodedOrRaw(req.path.split('?')[0]!);
    const label = `${req.method} ${path} → ${res.status}`;
    // The web console (apps/gateway/src/console) is for browsers, not API: its page at / and its /assets.
    if ((path === '/' && String(res.headers['content-type'] ?? '').startsWith('text/html')) || path.startsWith('/assets/')) return [];
    // The most specific template wins: /users/access_token/validate before /users/access_token/{…}.
    const template = templates
      .filter((t) => t.pattern.test(path) && pathItem(doc, t.path)?.[method])
      .sort((a, b) => literalLength(b.path) - literalLength(a.path))[0];
    if (!template) return [`${label}: no documented operation`];
    const operation = pathItem(doc, template.path)![method]!;
    const response = operation.responses[String(res.status)] ?? operation.responses[`${String(res.status)[0]}XX`];
    if (!response) return [`${label}: status not documented for ${template.path}`];
    const json = response.content?.['application/json'];
    // A HEAD answer carries its GET's (or its refusal's) headers without the body.
    if (method === 'head') return [];
    if (!json)
      return String(res.headers['content-type'] ?? '').startsWith('application/json') && res.text
        ? [`${label}: JSON body where none is documented`]
        : [];
    if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) return [`${label}: expected a JSON body`];
    const key = `${method} ${template.path} ${res.status}`;
    const validate = compiled.get(key) ?? ajv.compile(resolvable(json.schema));
    compiled.set(key, validate);
    return validate(res.body) ? [] : [`${label}: ${ajv.errorsText(validate.errors)}`];
  };
}

/** Hostile-input tests send paths that do not decode; the raw path still matches its template. */
function decodedOrRaw(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

// A schema inside the document refers to `#/components/schemas/X`; alone, ajv knows X by an id of its own.
const COMPONENT_ID = 'urn:openapi:component:';
const resolvable = (schema: unknown) =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${COMPONENT_ID}`)) as object;

function addComponents(ajv: Ajv2020, doc: Doc): void {
  for (const [name, schema] of Object.entries(doc.components.schemas ?? {})) ajv.addSchema(resolvable(schema), COMPONENT_ID + name);
}

const literalLength = (template: string) => template.replace(/\{[^}]+\}/g, '').length;

/**
 * Problems of a document against the OpenAPI 3.1 schema (the one @seriousme/openapi-schema-validator
 * ships; its validator is ESM-only, so ajv runs the schema here), plus any JSON Schema ajv cannot compile.
 */
export function openApiProblems(doc: Doc): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const oas = require('@seriousme/openapi-schema-validator/schemas/v3.1/schema.json') as object;
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addFormat('media-range', true); // used by the OAS schema for content keys; not a format ajv-formats knows
  const validate = ajv.compile(oas);
  const problems = validate(doc) ? [] : [ajv.errorsText(validate.errors)];
  const schemas = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true });
  addFormats(schemas);
  addComponents(schemas, doc);
  const walk = (value: unknown, at: string) => {
    if (typeof value !== 'object' || value === null) return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'schema' && typeof inner === 'object') {
        try {
          schemas.compile(resolvable(inner));
        } catch (error) {
          problems.push(`${at}: ${(error as Error).message}`);
        }
      } else walk(inner, `${at}/${key}`);
    }
  };
  walk(doc.paths, '#/paths');
  return problems;
}
