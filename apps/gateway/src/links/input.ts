// What the share-link API accepts. A link names files by id or by a template (as the bulk grants take
// one), resolved once, when the link is made.
import { z } from 'zod';
import { dateInput, fileSelection, MAX_SELECTION, templateSchema } from '../files/input';

/** A link's password: hashed as account passwords are; the strength rule of accounts would refuse "Friday-2026". */
export const LINK_PASSWORD = { min: 6, max: 256 } as const;
export const MAX_DOWNLOAD_LIMIT = 1_000_000;
export const MAX_LINKS_TAKE = 1000;

export const newLinkSchema = z
  .object({
    fileIds: fileSelection.optional(),
    template: templateSchema
      .optional()
      .describe(`A file template as the bulk grants take; the Completed files it matches, at most ${MAX_SELECTION}`),
    expiresAt: dateInput.nullish().describe('ISO 8601 or Unix time; absent or null: never'),
    password: z
      .string()
      .min(LINK_PASSWORD.min, `must be at least ${LINK_PASSWORD.min} characters`)
      .max(LINK_PASSWORD.max, `must be at most ${LINK_PASSWORD.max} characters`)
      .nullish(),
    downloadLimit: z.int().min(1).max(MAX_DOWNLOAD_LIMIT).nullish().describe('How many downloads the link gives; absent or null: no limit'),
    allowDownload: z.boolean().default(true).describe('false: the page shows previews only, and offers no download'),
  })
  .superRefine((body, ctx) => {
    if ((body.fileIds === undefined) === (body.template === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['fileIds'], message: 'give either fileIds or a template, not both' });
    }
  });

export type NewLinkInput = z.output<typeof newLinkSchema>;

export const linksQuery = z.object({
  fileId: z.string().max(2048).optional().describe("Only the links naming this file (a file's links)"),
  take: z.coerce.number().int().min(1).max(MAX_LINKS_TAKE).default(100),
  skip: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
});

export type LinksQuery = z.output<typeof linksQuery>;
