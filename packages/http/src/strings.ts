// One check for every string that may reach the database. PostgreSQL text and jsonb cannot hold a NUL
// character, and a lone UTF-16 surrogate has no UTF-8 form: either one would fail deep in a query as a
// 500. Refusing them at the input boundary keeps that rule independent of the query layer.
import { ApiError } from './errors';

/** NUL, or a surrogate half without its partner. */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored, or null when it can. */
export function unstorableReason(text: string): string | null {
  const match = UNSTORABLE.exec(text);
  if (!match) return null;
  return match[0] === '\u0000' ? 'may not contain NUL characters' : 'may not contain unpaired UTF-16 surrogates';
}

/** 400 naming `field` when `text` cannot be stored. */
export function assertStorable(text: string, field: string): void {
  const reason = unstorableReason(text);
  if (reason) throw ApiError.badRequest(`${field}: ${reason}`);
}

/**
 * Checks every string and object key inside `value` (a parsed JSON body or query object). Iterative, so
 * no input can exhaust the stack. 400 naming the first offending field, e.g. `body.tags.2`.
 */
export function assertStorableDeep(value: unknown, root: string): void {
  const pending: Array<[unknown, string]> = [[value, root]];
  while (pending.length > 0) {
    const [item, field] = pending.pop() as [unknown, string];
    if (typeof item === 'string') assertStorable(item, field);
    else if (typeof item === 'object' && item !== null) {
      // Reversed onto the stack, so fields are checked (and named) in document order.
      for (const [key, child] of Object.entries(item).reverse()) {
        assertStorable(key, `${field} key`);
        pending.push([child, `${field}.${key}`]);
      }
    }
  }
}
