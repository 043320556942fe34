// OpenAPI description of the Files API (see @pds/http openapi.ts).
import { z } from 'zod';
import type { ApiOperation } from '@pds/http';
import { contentQuery, metadataSchema, pageQuery, templateSchema, uploadSchema } from './input';
import { FILES_PATH } from './routes';

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

const file = (op: Omit<ApiOperation, 'path' | 'tag' | 'auth' | 'responses'> & { path: string }, many = false): ApiOperation => ({
  ...op,
  path: `${FILES_PATH}${op.path}`,
  tag: 'files',
  auth: 'instanceToken',
  responses: { 200: many ? { description: 'The files', body: z.array(fileBody) } : { description: 'The file', body: fileBody } },
});

export const filesApi: ApiOperation[] = [
  file({
    method: 'post',
    path: '/upload',
    summary: 'Step 1 of an upload: the metadata; answers a signed upload address',
    body: uploadSchema,
  }),
  file({ method: 'put', path: '/file/:fileId/complete', summary: 'Step 3 of an upload: the bytes are there; the file becomes Completed' }),
  file({
    method: 'get',
    path: '/file/:fileId',
    summary: 'A file the caller may see, with a download address when it may read the content',
  }),
  file({ method: 'put', path: '/file/:fileId', summary: "Change a file's metadata (uploader or owner)", body: metadataSchema }),
  file({ method: 'delete', path: '/file/:fileId', summary: 'Delete a file (uploader or owner)' }),
  {
    method: 'get',
    path: `${FILES_PATH}/content/:fileId`,
    tag: 'files',
    auth: 'none',
    summary: 'Redirect to a signed download address',
    description: 'Needs a token unless the file is public.',
    responses: { 303: { description: 'Location: the signed download address' } },
  },
  file({
    method: 'get',
    path: '/allowAccess/:fileId/:userId',
    summary: 'Let a user see the file (and read its content with content=true)',
    query: contentQuery,
  }),
  file({ method: 'get', path: '/restrictAccess/:fileId/:userId', summary: "Remove a user's access to the file" }),
  file(
    {
      method: 'post',
      path: '/allowAccess/:userId',
      summary: 'Let a user see every file that matches the template',
      query: contentQuery,
      body: templateSchema,
    },
    true,
  ),
  file(
    {
      method: 'post',
      path: '/restrictAccess/:userId',
      summary: "Remove a user's access to every file that matches the template",
      body: templateSchema,
    },
    true,
  ),
  file({ method: 'get', path: '/allowAccessPublic/:fileId', summary: 'Make the content public' }),
  file({ method: 'get', path: '/restrictAccessPublic/:fileId', summary: 'Make the content private again' }),
  file(
    {
      method: 'post',
      path: '/search',
      summary: 'The files the caller may see that match the template',
      query: pageQuery,
      body: templateSchema,
    },
    true,
  ),
];
