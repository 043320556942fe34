// /api/v2.6/files: each route declared once (who may call, input, output, summary); the handler calls
// one service function. Who may do what to which file is decided in access.ts, through the service.
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { json, redirect } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import { fileContentRead } from '../events/read-notes';
import { ARCHIVE_PATH, type ArchiveService } from './archive';
import {
  archiveSchema,
  BULK_ACTIONS,
  bulkSchema,
  contentQuery,
  listingQuery,
  MAX_SELECTION,
  metadataSchema,
  pageQuery,
  PHOTOS_MAX_TAKE,
  photosQuery,
  templateSchema,
  uploadSchema,
} from './input';
import type { FileService } from './service';

export const FILES_PATH = '/api/v2.6/files';

export const fileBody = z.object({
  fileId: z.string(),
  name: z.string(),
  source: z.string(),
  tags: z.array(z.string()),
  title: z.string().optional(),
  description: z.string().optional(),
  dateCreated: z.iso.datetime(),
  lastUpdated: z.iso.datetime(),
  status: z.object({ status: z.enum(['New', 'Completed', 'Deleted']), size: z.number().optional() }),
  contentUrl: z.url().optional().describe('Signed upload address (after upload) or download address (when readable)'),
  thumbnailUrl: z
    .url()
    .optional()
    .describe('Signed address of a small WebP picture of the content, when one is stored and the content is readable'),
  contentPublic: z.boolean(),
  permissions: z
    .array(z.object({ userId: z.uuid(), contentReadable: z.boolean() }))
    .optional()
    .describe('Shown to the owner only'),
});
const one = { 200: { description: 'The file', body: fileBody } };
const many = { 200: { description: 'The files', body: z.array(fileBody) } };

const listing = z.object({
  files: z.array(fileBody).describe('One page, in the order asked for'),
  total: z.int().describe('How many files match'),
  totalBytes: z.number().describe('Their bytes together'),
});
const photosPage = z.object({
  photos: z.array(
    z.object({
      fileId: z.string(),
      name: z.string(),
      date: z.iso.datetime().describe("When it was taken: the picture's EXIF date (DateTimeOriginal), else the file's dateCreated"),
      localDate: z.iso
        .datetime({ local: true })
        .optional()
        .describe('The clock where it was taken, without a zone, when its EXIF says: the day to show it under, wherever the viewer is'),
      width: z.int().optional().describe("The thumbnail's width in pixels (absent for thumbnails made before sizes were kept)"),
      height: z.int().optional(),
      thumbnailUrl: z.url().describe('Signed address of the WebP thumbnail'),
      contentUrl: z.url().describe('Signed address of the content'),
    }),
  ),
  next: z.string().nullable().describe('The cursor of the next page; null after the last'),
  total: z.int().optional().describe('How many pictures there are (first page only)'),
});
const bulkResult = z.object({
  updated: z.array(fileBody).describe('The files the action was done to, as they are now'),
  failed: z
    .array(z.object({ fileId: z.string(), error: z.string(), message: z.string() }))
    .describe('The files it could not be done to, with the refusal a single call would answer'),
});

const fileParams = z.object({ fileId: z.string() });
const grantParams = z.object({ fileId: z.string(), userId: z.string() });
const userParams = z.object({ userId: z.string() });
const tag = 'files';

export function fileRoutes(files: FileService, archives: ArchiveService): GatewayRoute[] {
  return [
    route({
      method: 'post',
      path: `${FILES_PATH}/upload`,
      access: 'token',
      tag,
      summary: 'Step 1 of an upload: the metadata; answers a signed upload address',
      body: uploadSchema,
      responses: one,
      handle: async ({ tenant, caller, body }) => json(await files.upload(tenant, caller, body)),
    }),
    route({
      method: 'put',
      path: `${FILES_PATH}/file/:fileId/complete`,
      access: 'token',
      tag,
      summary: 'Step 3 of an upload: the bytes are there; the file becomes Completed',
      params: fileParams,
      responses: one,
      handle: async ({ tenant, caller, params }) => json(await files.complete(tenant, caller, params)),
    }),
    route({
      method: 'get',
      path: `${FILES_PATH}/file/:fileId`,
      access: 'token',
      tag,
      summary: 'A file the caller may see, with a download address when it may read the content',
      params: fileParams,
      responses: one,
      handle: async ({ tenant, caller, params }) => json(await files.get(tenant, caller, params)),
    }),
    // The path names the file (the original took the id from the body and judged access by it).
    route({
      method: 'put',
      path: `${FILES_PATH}/file/:fileId`,
      access: 'token',
      tag,
      summary: "Change a file's metadata (uploader or owner)",
      params: fileParams,
      body: metadataSchema,
      responses: one,
      handle: async ({ tenant, caller, params, body }) => json(await files.updateMetadata(tenant, caller, { ...params, metadata: body })),
    }),
    route({
      method: 'delete',
      path: `${FILES_PATH}/file/:fileId`,
      access: 'token',
      tag,
      summary: 'Delete a file (uploader or owner)',
      params: fileParams,
      responses: one,
      handle: async ({ tenant, caller, params }) => json(await files.delete(tenant, caller, params)),
    }),
    route({
      method: 'get',
      path: `${FILES_PATH}/content/:fileId`,
      access: 'anyone',
      tag,
      summary: 'Redirect to a signed download address',
      description: 'Needs a token unless the file is public.',
      params: fileParams,
      responses: { 303: { description: 'Location: the signed download address' } },
      read: fileContentRead,
      handle: async ({ tenant, caller, params }) => redirect(await files.contentAddress(tenant, caller, params)),
    }),
    route({
      method: 'get',
      path: `${FILES_PATH}/allowAccess/:fileId/:userId`,
      access: 'token',
      tag,
      summary: 'Let a user see the file (and read its content with content=true)',
      params: grantParams,
      query: contentQuery,
      responses: one,
      handle: async ({ tenant, caller, params, query }) => json(await files.grant(tenant, caller, { ...params, content: query.content })),
    }),
    route({
      method: 'get',
      path: `${FILES_PATH}/restrictAccess/:fileId/:userId`,
      access: 'token',
      tag,
      summary: "Remove a user's access to the file",
      params: grantParams,
      responses: one,
      handle: async ({ tenant, caller, params }) => json(await files.revoke(tenant, caller, params)),
    }),
    route({
      method: 'post',
      path: `${FILES_PATH}/allowAccess/:userId`,
      access: 'token',
      tag,
      summary: 'Let a user see every file that matches the template',
      params: userParams,
      query: contentQuery,
      body: templateSchema,
      responses: many,
      handle: async ({ tenant, caller, params, query, body }) =>
        json(await files.grantMatching(tenant, caller, { template: body, userId: params.userId, content: query.content })),
    }),
    route({
      method: 'post',
      path: `${FILES_PATH}/restrictAccess/:userId`,
      access: 'token',
      tag,
      summary: "Remove a user's access to every file that matches the template",
      params: userParams,
      body: templateSchema,
      responses: many,
      handle: async ({ tenant, caller, params, body }) =>
        json(await files.revokeMatching(tenant, caller, { template: body, userId: params.userId })),
    }),
    ...(
      [
        ['allowAccessPublic', true, 'Make the content public'],
        ['restrictAccessPublic', false, 'Make the content private again'],
      ] as const
    ).map(([action, contentPublic, summary]) =>
      route({
        method: 'get',
        path: `${FILES_PATH}/${action}/:fileId`,
        access: 'token',
        tag,
        summary,
        params: fileParams,
        responses: one,
        handle: async ({ tenant, caller, params }) => json(await files.setPublic(tenant, caller, { ...params, contentPublic })),
      }),
    ),
    route({
      method: 'post',
      path: `${FILES_PATH}/search`,
      access: 'token',
      tag,
      summary: 'The files the caller may see that match the template',
      query: pageQuery,
      body: templateSchema,
      responses: many,
      handle: async ({ tenant, caller, query, body }) => json(await files.search(tenant, caller, { template: body, page: query })),
    }),
    route({
      method: 'get',
      path: `${FILES_PATH}/listing`,
      access: 'token',
      tag,
      summary: 'One page of the files the caller may see, filtered and sorted, with the total',
      description:
        "The files search returns, of one state (`status`, default Completed). `q`: words that each start a word of the name, source, title or description; `type`: the kind the name's extension says; `shared` (owner only): whether an account other than the owner holds a permission; `sort` name (A–Z first), date (lastUpdated, newest first) or size (largest first), `order` to turn it round.",
      query: listingQuery,
      responses: { 200: { description: 'The page and the totals of every match', body: listing } },
      handle: async ({ tenant, caller, query }) => json(await files.listing(tenant, caller, query)),
    }),
    route({
      method: 'get',
      path: `${FILES_PATH}/photos`,
      access: 'token',
      tag,
      summary: 'The photo timeline: pictures with a thumbnail, newest first, a page at a time',
      description: `Completed files that have a thumbnail (images; videos once theirs exist) whose content the caller may read, by \`dateCreated\` (newest first, ties by fileId), with their thumbnail's size for a grid laid out before the pictures load. \`take\` 1–${PHOTOS_MAX_TAKE} (default 100); \`cursor\`: the \`next\` of the page before. The first page also counts them (\`total\`).`,
      query: photosQuery,
      responses: { 200: { description: 'One page, and where the next starts', body: photosPage } },
      handle: async ({ tenant, caller, query }) => json(await files.photos(tenant, caller, query)),
    }),
    route({
      method: 'get',
      path: `${FILES_PATH}/tags`,
      access: 'token',
      tag,
      summary: 'Every tag on the completed files the caller may see',
      description: 'Reads every such file: ask once per screen, not per page.',
      responses: { 200: { description: 'The tags, sorted', body: z.object({ tags: z.array(z.string()) }) } },
      handle: async ({ tenant, caller }) => json(await files.tags(tenant, caller)),
    }),
    route({
      method: 'get',
      path: `${FILES_PATH}/thumbnail/:fileId`,
      access: 'anyone',
      tag,
      summary: "Redirect to a signed address of a file's thumbnail",
      description: 'The rules of content; 404 while the file has no thumbnail (only images get one, made shortly after they complete).',
      params: fileParams,
      responses: { 303: { description: 'Location: the signed address of the WebP picture' } },
      handle: async ({ tenant, caller, params }) => redirect(await files.thumbnailAddress(tenant, caller, params)),
    }),
    route({
      method: 'post',
      path: ARCHIVE_PATH,
      access: 'token',
      tag,
      summary: 'A signed address of one zip of the selected files',
      description: `At most ${MAX_SELECTION} files; the zip holds those whose content the caller may read (the others are left out), and 404 when there is none.`,
      body: archiveSchema,
      responses: {
        200: {
          description: 'The download address (valid for SIGNED_URL_TTL) and the name to save it as',
          body: z.object({ url: z.url(), name: z.string() }),
        },
      },
      handle: async ({ tenant, caller, body }) => json(await archives.create(tenant, caller, body)),
    }),
    // Express answers HEAD with this route too: the headers alone, no zip made.
    route({
      method: 'get',
      path: `${ARCHIVE_PATH}/:token`,
      access: 'instance',
      tag,
      summary: 'The zip of a selection',
      description: 'The address comes from POST /files/archive; its token alone authorises it until it expires (403 after).',
      params: z.object({ token: z.string() }),
      responses: { 200: { description: 'The zip, streamed as it is made', contentType: 'application/zip' } },
      async handle({ tenant, params, req, res }) {
        const archive = await archives.open(tenant, params.token);
        res.setHeader('Content-Type', 'application/zip');
        res.setHeader('Content-Disposition', `attachment; filename="${archive.name}"`);
        res.setHeader('Cache-Control', 'no-store');
        if (req.method === 'HEAD') {
          archive.stream.destroy();
          res.end();
          return undefined;
        }
        await pipeline(archive.stream, res);
        return undefined;
      },
    }),
    route({
      method: 'post',
      path: `${FILES_PATH}/bulk`,
      access: 'owner',
      tag,
      summary: 'One action on several files',
      description: `At most ${MAX_SELECTION} files; \`action\` one of ${BULK_ACTIONS.join(', ')}. \`userId\` names whom to share with or unshare from (404 for an unknown user, and nothing changes); \`content\` lets a share read the bytes too. Sharing and visibility change every file in one transaction.`,
      body: bulkSchema,
      responses: { 200: { description: 'What was done and what could not be', body: bulkResult } },
      handle: async ({ tenant, caller, body }) => json(await files.bulk(tenant, caller, body)),
    }),
  ];
}
