import type { z } from 'zod';
import { ApiError } from './errors';

/** Parses input with a zod schema; failure is a 400 whose message names each field and rule. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = 'body'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.join('.') : what;
    return `${field}: ${issue.message}`;
  });
  throw ApiError.badRequest(problems.join('; '));
}
