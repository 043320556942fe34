// Share links: the owner's API (/api/v2.6/files/links) and the link's own address (/s/<token>), where
// anyone holding the link opens it without an account. The link's routes answer a browser with pages
// (the link, its password form, or why it opens nothing) and any other client with JSON, in the error
// model for refusals. They take no token: the address is the permission, checked on every use.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { ParsedUrlQuery } from 'node:querystring';
import { z } from 'zod';
import { ApiError, json, JSON_TYPE, parseJson, readText, redirect, toApiError, type Client, type Reply } from '@pds/http';
import type { Logger } from '@pds/runtime';
import { wantsPage } from '../console';
import type { InstanceRegistry, ResolvedInstance } from '../instances/registry';
import { requireActive } from '../instances/state';
import { addressOfHost } from '../instances/tenancy';
import { route, type GatewayRoute } from '../route';
import { FILES_PATH } from '../files/routes';
import { LINK_PASSWORD, linksQuery, MAX_LINKS_TAKE, newLinkSchema } from './input';
import { mediaTypeOf, previewOf } from './media';
import { linkPage, linkPageCsp, passwordPage, refusalPage, type LinkPaths } from './page';
import { UNLOCK_COOKIE } from './secrets';
import { LINK_PATH, type ShareLinkService } from './service';
import type { LinkVisits, OpenLink, Visitor } from './visits';

const LINKS_PATH = `${FILES_PATH}/links`;
const tag = 'files';

const linkBody = z.object({
  id: z.uuid(),
  url: z.url().optional().describe("The link's address, with its token: answered once, when the link is made (it is stored hashed)"),
  fileIds: z.array(z.string()).describe('The files it names, in the order given'),
  state: z.enum(['active', 'expired', 'used-up', 'revoked']).describe('Whether it still opens, and why not'),
  hasPassword: z.boolean(),
  expiresAt: z.iso.datetime().optional(),
  downloadLimit: z.int().optional(),
  downloads: z.int().describe('Downloads so far (a zip counts one)'),
  views: z.int().describe('Times its page was shown'),
  lastUsedAt: z.iso.datetime().optional(),
  allowDownload: z.boolean(),
  createdAt: z.iso.datetime(),
  revokedAt: z.iso.datetime().optional(),
});

export interface LinkRouteDeps {
  registry: InstanceRegistry;
  /** Origin of the store's signed addresses when it is not the instance's (S3), for the page's CSP. */
  blobOrigin: string | undefined;
  /** Public base URL of an instance address. */
  baseUrl: (address: string) => string;
  /** Mark the unlock cookie Secure (instances served over https). */
  secureCookies: boolean;
  logger: Logger;
}

/** The headers of every answer at a link's address: the token in it must not leak, nor the page be indexed. */
const LINK_HEADERS = { 'Referrer-Policy': 'no-referrer', 'X-Robots-Tag': 'noindex, nofollow', 'Cache-Control': 'no-store' };

const visitParams = z.object({ token: z.string() });
const fileParams = z.object({ token: z.string(), fileId: z.string() });

export function linkRoutes(links: ShareLinkService, visits: LinkVisits, deps: LinkRouteDeps): GatewayRoute[] {
  const csp = linkPageCsp(deps.blobOrigin);
  const html = (body: string, status = 200, headers: Record<string, string> = {}): Reply => ({
    status,
    headers: { ...headers, 'Content-Security-Policy': csp },
    text: { type: 'text/html; charset=utf-8', body },
  });

  interface Visit {
    tenant: ResolvedInstance;
    visitor: Visitor;
    /** Addresses under the link's, relative for the page, absolute for JSON. */
    paths: LinkPaths;
    page: boolean;
  }

  /**
   * Runs one use of a link: the instance (which must be active: suspended or closing, its links give
   * nothing), the visitor, and, for a browser, every refusal as a page (a password form for a 401).
   */
  async function visit(
    input: { client: Client; params: { token: string }; query: ParsedUrlQuery; req: IncomingMessage; res: ServerResponse },
    work: (visit: Visit) => Promise<Reply | undefined>,
  ): Promise<Reply | undefined> {
    const { client, params, req, res } = input;
    for (const [name, value] of Object.entries(LINK_HEADERS)) res.setHeader(name, value);
    const page = wantsPage(req, input.query);
    const local = linkPaths(`${LINK_PATH}/${encodeURIComponent(params.token)}`);
    try {
      const tenant = await deps.registry.resolve(addressOfHost(client.host));
      if (!tenant) throw ApiError.notFound('There is no link at this address.');
      requireActive(tenant);
      const paths = page ? local : linkPaths(`${deps.baseUrl(tenant.instance.address)}${local.base}`);
      return await work({ tenant, visitor: { ip: client.ip, proof: cookieOf(req, UNLOCK_COOKIE) }, paths, page });
    } catch (error) {
      if (!page) throw error;
      const refusal = toApiError(error);
      if (refusal.status >= 500) deps.logger.error({ err: error, reqId: req.id }, 'share link request failed');
      if (refusal.status === 401) return html(passwordPage(local, req.method === 'POST' ? refusal.message : undefined), 401);
      return html(refusalPage(refusal), refusal.status, refusal.extra.headers);
    }
  }

  const download = (input: Parameters<typeof visit>[0] & { params: { fileId?: string } }) =>
    visit(input, async ({ tenant, visitor }) => {
      const { req, res, params } = input;
      const got = await visits.download(tenant, params.token, visitor, params.fileId, { count: req.method === 'GET' });
      if (!got) return { status: 204 };
      if ('url' in got) return redirect(got.url);
      res.setHeader('Content-Type', 'application/zip');
      res.setHeader('Content-Disposition', `attachment; filename="${got.zip.name}"`);
      await pipeline(got.zip.stream, res);
      return undefined;
    });

  return [
    route({
      method: 'post',
      path: LINKS_PATH,
      access: 'owner',
      tag,
      summary: 'Share files through a link that needs no account',
      description:
        "Names files by `fileIds` or by a `template` (as the bulk grants take one), Completed files only. The answer holds the link's address, once: it is stored hashed. Optional `expiresAt`, `password`, `downloadLimit`; `allowDownload: false` makes a link that only shows previews. Anyone holding the address opens it at `/s/<token>` (docs/sharing.md).",
      body: newLinkSchema,
      responses: { 201: { description: 'The link, with its address', body: linkBody } },
      handle: async ({ tenant, caller, body }) => json(await links.create(tenant, caller, body), 201),
    }),
    route({
      method: 'get',
      path: LINKS_PATH,
      access: 'owner',
      tag,
      summary: 'The share links, newest first, with their use',
      description: `\`fileId\`: only the links naming that file. At most ${MAX_LINKS_TAKE} a page (\`take\`, \`skip\`). Revoked, expired and used-up links stay listed, with their \`state\`.`,
      query: linksQuery,
      responses: { 200: { description: 'The links (never their addresses)', body: z.array(linkBody) } },
      handle: async ({ tenant, caller, query }) => json(await links.list(tenant, caller, query)),
    }),
    route({
      method: 'delete',
      path: `${LINKS_PATH}/:id`,
      access: 'owner',
      tag,
      summary: 'Revoke a share link: it opens nothing from the next request, on every gateway',
      params: z.object({ id: z.string() }),
      responses: { 200: { description: 'The link, revoked', body: linkBody } },
      handle: async ({ tenant, caller, params }) => json(await links.revoke(tenant, caller, params.id)),
    }),

    // The link's own address. Pages for browsers: not part of the API document (docs/sharing.md describes them).
    route({
      method: 'get',
      path: `${LINK_PATH}/:token`,
      access: 'public',
      hidden: true,
      tag,
      summary: "A share link's page, or the link as JSON",
      params: visitParams,
      responses: { 200: { description: 'The page (a browser), or what the link shares (JSON)' } },
      handle: (input) =>
        visit(input, async ({ tenant, visitor, paths, page }) => {
          const link =
            input.req.method === 'HEAD'
              ? await visits.open(tenant, input.params.token, visitor)
              : await visits.view(tenant, input.params.token, visitor);
          return page ? html(linkPage(link, paths)) : json(visitJson(link, paths));
        }),
    }),
    route({
      method: 'post',
      path: `${LINK_PATH}/:token`,
      access: 'public',
      hidden: true,
      tag,
      summary: "Give a share link's password",
      params: visitParams,
      rawBody: { contentType: 'application/x-www-form-urlencoded', description: '`password=…` (or JSON `{ "password" }`)' },
      responses: { 303: { description: 'Unlocked: back to the page, with the cookie that unlocks it' } },
      handle: (input) =>
        visit(input, async ({ tenant, visitor, paths, page }) => {
          const password = await readPassword(input.req);
          const { proof, maxAgeSeconds } = await visits.unlock(tenant, input.params.token, password, visitor);
          const secure = deps.secureCookies ? '; Secure' : '';
          const cookie = `${UNLOCK_COOKIE}=${proof}; Path=${paths.base.replace(/^https?:\/\/[^/]+/, '')}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`;
          if (page) return { status: 303, headers: { Location: paths.base, 'Set-Cookie': cookie } };
          const link = await visits.view(tenant, input.params.token, { ...visitor, proof });
          return json(visitJson(link, paths), 200, { 'Set-Cookie': cookie });
        }),
    }),
    route({
      method: 'get',
      path: `${LINK_PATH}/:token/download`,
      access: 'public',
      hidden: true,
      tag,
      summary: 'Download what a share link shares: its file, or the zip of its files',
      params: visitParams,
      responses: {
        303: { description: 'Location: a signed address of the file' },
        200: { description: 'The zip', contentType: 'application/zip' },
      },
      handle: download,
    }),
    route({
      method: 'get',
      path: `${LINK_PATH}/:token/download/:fileId`,
      access: 'public',
      hidden: true,
      tag,
      summary: "Download one of a share link's files",
      params: fileParams,
      responses: { 303: { description: 'Location: a signed address of the file' } },
      handle: download,
    }),
    route({
      method: 'get',
      path: `${LINK_PATH}/:token/preview/:fileId`,
      access: 'public',
      hidden: true,
      tag,
      summary: "One of a share link's files, shown in the browser",
      params: fileParams,
      responses: { 303: { description: 'Location: a signed address that shows the file inline' } },
      handle: (input) =>
        visit(input, async ({ tenant, visitor }) =>
          redirect(await visits.preview(tenant, input.params.token, visitor, input.params.fileId)),
        ),
    }),
  ];
}

function linkPaths(base: string): LinkPaths {
  return {
    base,
    preview: (fileId) => `${base}/preview/${encodeURIComponent(fileId)}`,
    download: (fileId) => (fileId === undefined ? `${base}/download` : `${base}/download/${encodeURIComponent(fileId)}`),
  };
}

/** What a link shares, for a client that is not a browser: each file with where to see and fetch it. */
function visitJson(link: OpenLink, paths: LinkPaths) {
  return {
    files: link.files.map((file) => ({
      fileId: file.fileId,
      name: file.name,
      size: file.size,
      type: mediaTypeOf(file.name),
      ...(previewOf(file.name) ? { preview: paths.preview(file.fileId) } : {}),
      ...(link.allowDownload ? { download: paths.download(file.fileId) } : {}),
    })),
    allowDownload: link.allowDownload,
    ...(link.allowDownload ? { download: paths.download() } : {}),
    ...(link.expiresAt ? { expiresAt: link.expiresAt.toISOString() } : {}),
    ...(link.downloadsLeft === null ? {} : { downloadsLeft: link.downloadsLeft }),
  };
}

/** The value of one cookie of the request, if it carries it (bounded: a proof is short). */
function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === name && value && value.length <= 200) return value;
  }
  return undefined;
}

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;

/** The password of a form (`password=…`) or a JSON body; 400 without one, 415 for another kind of body. */
async function readPassword(req: IncomingMessage): Promise<string> {
  const type = req.headers['content-type'] ?? '';
  const form = FORM_TYPE.test(type);
  if (!form && !JSON_TYPE.test(type)) {
    req.resume();
    throw new ApiError(415, 'Unsupported Media Type', 'Send the password as a form (password=…) or as JSON ({"password": …})');
  }
  let text: string;
  try {
    text = await readText(req, 4 * LINK_PASSWORD.max + 64);
  } catch (error) {
    req.resume();
    throw error;
  }
  const password = form ? new URLSearchParams(text).get('password') : (parseJson(text) as { password?: unknown } | null)?.password;
  if (typeof password !== 'string' || password === '') throw ApiError.badRequest('password: is required');
  if (password.length > LINK_PASSWORD.max) throw ApiError.badRequest(`password: must be at most ${LINK_PASSWORD.max} characters`);
  return password;
}
