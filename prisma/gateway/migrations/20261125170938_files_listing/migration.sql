-- A small picture of the content, made by the thumbnail job, is stored beside the file's bytes.
-- AlterTable
ALTER TABLE "File" ADD COLUMN     "thumbnail" BOOLEAN NOT NULL DEFAULT false;

-- The listing (GET /api/v2.6/files/listing) pages one state's files sorted by date, name or size: one
-- index per sort, each walked forwards or backwards for either order, so a page never sorts the state.
-- The size index also makes the listing's totals (count and bytes) an index-only scan.
-- CreateIndex
CREATE INDEX "File_listing_date_idx" ON "File"("instanceId", "status", "lastUpdated" DESC, "fileId");

-- CreateIndex
CREATE INDEX "File_listing_size_idx" ON "File"("instanceId", "status", "size", "fileId");

-- Names sort without regard to case. Prisma cannot express an expression index, hence raw SQL (this one and the next).
CREATE INDEX "File_listing_name_idx" ON "File"("instanceId", "status", lower("name"), "fileId");

-- The listing's words (q) match the start of any word of the name, source, title or description. The
-- separators the text search parser would keep inside one token (holiday_photo.jpg is one "host" word,
-- the -001 of bulk-001 a signed number)
-- become spaces first. The expression must stay identical to FILE_WORDS in packages/db/src/files.ts.
CREATE INDEX "File_words_fts_idx" ON "File" USING GIN (to_tsvector('simple'::regconfig, translate("name" || ' ' || "source" || ' ' || coalesce("title", '') || ' ' || coalesce("description", ''), '._/@:-', '      ')));
