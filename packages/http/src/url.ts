// The request target, checked once before any route: a path whose percent-encoding does not decode
// (`/data/%zz/x`) or that decodes to a NUL, and query values that cannot be stored (strings.ts), are
// a 400 here instead of a URIError or a database error deep inside a handler.
import type { RequestHandler } from 'express';
import { ApiError } from './errors';
import { assertStorable, assertStorableDeep } from './strings';

export const checkRequestTarget: RequestHandler = (req, _res, next) => {
  let path: string;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    throw ApiError.badRequest('path: broken percent-encoding');
  }
  assertStorable(path, 'path');
  assertStorableDeep(req.query, 'query');
  next();
};
