// /api/v2.6/files: validate, call one service function, render. Access rules live in access.ts.
import { Router, type Request } from 'express';
import { parseInput } from '@pds/http';
import { callerOf, tenantOf } from '../context';
import { viewerOf } from './access';
import { contentQuery, metadataSchema, pageQuery, templateSchema, uploadSchema } from './input';
import type { FileService } from './service';

export const FILES_PATH = '/api/v2.6/files';

/** An authenticated caller is required everywhere but on content (public files). */
const authenticated = (req: Request) => viewerOf(callerOf(req));
const param = (req: Request, name: string) => req.params[name] as string;

export function fileRoutes(files: FileService): Router {
  const router = Router();

  router.post('/upload', async (req, res) => {
    const viewer = authenticated(req);
    res.json(await files.upload(tenantOf(req), viewer, parseInput(uploadSchema, req.body ?? {})));
  });

  router.put('/file/:fileId/complete', async (req, res) => {
    res.json(await files.complete(tenantOf(req), authenticated(req), param(req, 'fileId')));
  });

  router.get('/file/:fileId', async (req, res) => {
    res.json(await files.get(tenantOf(req), authenticated(req), param(req, 'fileId')));
  });

  // The path names the file (the original took the id from the body and judged access by it).
  router.put('/file/:fileId', async (req, res) => {
    const viewer = authenticated(req);
    res.json(await files.updateMetadata(tenantOf(req), viewer, param(req, 'fileId'), parseInput(metadataSchema, req.body ?? {})));
  });

  router.delete('/file/:fileId', async (req, res) => {
    res.json(await files.delete(tenantOf(req), authenticated(req), param(req, 'fileId')));
  });

  router.get('/content/:fileId', async (req, res) => {
    const address = await files.contentAddress(tenantOf(req), viewerOf(req.caller), param(req, 'fileId'));
    // Location alone: res.redirect would negotiate a small HTML or text body that no client reads.
    res.status(303).location(address).end();
  });

  router.get('/allowAccess/:fileId/:userId', async (req, res) => {
    const viewer = authenticated(req);
    const { content } = parseInput(contentQuery, req.query, 'query');
    res.json(await files.grant(tenantOf(req), viewer, param(req, 'fileId'), param(req, 'userId'), content));
  });

  router.get('/restrictAccess/:fileId/:userId', async (req, res) => {
    res.json(await files.revoke(tenantOf(req), authenticated(req), param(req, 'fileId'), param(req, 'userId')));
  });

  router.post('/allowAccess/:userId', async (req, res) => {
    const viewer = authenticated(req);
    const { content } = parseInput(contentQuery, req.query, 'query');
    const template = parseInput(templateSchema, req.body ?? {});
    res.json(await files.grantMatching(tenantOf(req), viewer, template, param(req, 'userId'), content));
  });

  router.post('/restrictAccess/:userId', async (req, res) => {
    const viewer = authenticated(req);
    const template = parseInput(templateSchema, req.body ?? {});
    res.json(await files.revokeMatching(tenantOf(req), viewer, template, param(req, 'userId')));
  });

  for (const [action, contentPublic] of [
    ['allowAccessPublic', true],
    ['restrictAccessPublic', false],
  ] as const) {
    router.get(`/${action}/:fileId`, async (req, res) => {
      res.json(await files.setPublic(tenantOf(req), authenticated(req), param(req, 'fileId'), contentPublic));
    });
  }

  router.post('/search', async (req, res) => {
    const viewer = authenticated(req);
    const page = parseInput(pageQuery, req.query, 'query');
    res.json(await files.search(tenantOf(req), viewer, parseInput(templateSchema, req.body ?? {}), page));
  });

  return router;
}
