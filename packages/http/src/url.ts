// The request target check (routing/request.ts) for what express serves itself: pages, assets, unknown paths.
import type { RequestHandler } from 'express';
import { checkTarget, targetOf } from './routing/request';

export const checkRequestTarget: RequestHandler = (req, _res, next) => {
  const { path, query } = targetOf(req);
  checkTarget(path, query);
  next();
};
