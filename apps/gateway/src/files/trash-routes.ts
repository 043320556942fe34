// /api/v2.6/files/trash: the owner's trash (trash.ts) — list, restore, purge one, empty.
import { z } from 'zod';
import { json } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import { pageQuery } from './input';
import { FILES_PATH, fileBody } from './routes';
import type { TrashService } from './trash';

const TRASH_PATH = `${FILES_PATH}/trash`;
const tag = 'files';
const fileParams = z.object({ fileId: z.string() });
const trashed = fileBody.extend({
  trashedAt: z.iso.datetime().describe('When it was deleted'),
  size: z.number().describe('Its bytes, counted in the quota until it is purged'),
});
const notInTrash = { 404: { description: 'No such file in the trash' } };

export function trashRoutes(trash: TrashService): GatewayRoute[] {
  return [
    route({
      method: 'get',
      path: TRASH_PATH,
      access: 'owner',
      tag,
      summary: 'The deleted files still in the trash, most recently deleted first',
      description:
        'A deleted file waits here TRASH_DAYS (30 by default) before it is purged; its bytes count in the quota until then. Its content and shares are suspended meanwhile.',
      query: pageQuery,
      responses: { 200: { description: 'One page of the trash', body: z.array(trashed) } },
      handle: async ({ tenant, query }) => json(await trash.list(tenant, query)),
    }),
    route({
      method: 'post',
      path: `${TRASH_PATH}/:fileId/restore`,
      access: 'owner',
      tag,
      summary: 'Bring a deleted file back, with its bytes and permissions',
      params: fileParams,
      responses: { 200: { description: 'The file, Completed again', body: fileBody }, ...notInTrash },
      handle: async ({ tenant, caller, params }) => json(await trash.restore(tenant, params.fileId, caller.actor)),
    }),
    route({
      method: 'delete',
      path: `${TRASH_PATH}/:fileId`,
      access: 'owner',
      tag,
      summary: 'Purge one file from the trash: its bytes are removed for good',
      params: fileParams,
      responses: { 200: { description: 'The file, Deleted', body: fileBody }, ...notInTrash },
      handle: async ({ tenant, caller, params }) => json(await trash.purge(tenant, params.fileId, caller.actor)),
    }),
    route({
      method: 'delete',
      path: TRASH_PATH,
      access: 'owner',
      tag,
      summary: 'Empty the trash',
      responses: { 200: { description: 'How many files were purged', body: z.object({ purged: z.int() }) } },
      handle: async ({ tenant, caller }) => json(await trash.empty(tenant, caller.actor)),
    }),
  ];
}
