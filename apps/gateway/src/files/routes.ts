// /api/v2.6/files: each route declared once (who may call, input, output, summary); the handler calls
// one service function. Who may do what to which file is decided in access.ts, through the service.
import { z } from 'zod';
import { json, redirect } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import { contentQuery, metadataSchema, pageQuery, templateSchema, uploadSchema } from './input';
import type { FileService } from './service';

export const FILES_PATH = '/api/v2.6/files';

const fileBody = z.object({
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
  contentPublic: z.boolean(),
  permissions: z
    .array(z.object({ userId: z.uuid(), contentReadable: z.boolean() }))
    .optional()
    .describe('Shown to the owner only'),
});
const one = { 200: { description: 'The file', body: fileBody } };
const many = { 200: { description: 'The files', body: z.array(fileBody) } };

const fileParams = z.object({ fileId: z.string() });
const grantParams = z.object({ fileId: z.string(), userId: z.string() });
const userParams = z.object({ userId: z.string() });
const tag = 'files';

export function fileRoutes(files: FileService): GatewayRoute[] {
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
  ];
}
