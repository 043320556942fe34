-- AlterTable
ALTER TABLE "File" ADD COLUMN     "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- The worker's sweep looks across instances for uploads still New past the deadline: a small
-- partial index keeps that cheap however many completed files there are.
CREATE INDEX "File_new_createdAt_idx" ON "File"("createdAt") WHERE "status" = 'New';

-- fileId allocation: one counter row per (instance, slug base, extension): see FileIdCounter in files.prisma.
-- CreateTable
CREATE TABLE "FileIdCounter" (
    "instanceId" UUID NOT NULL,
    "base" TEXT NOT NULL,
    "ext" TEXT NOT NULL,
    "last" INTEGER NOT NULL,

    CONSTRAINT "FileIdCounter_pkey" PRIMARY KEY ("instanceId","base","ext")
);

-- Approximate title/description search (CONTRACT §2): full text with the 'simple' configuration (no
-- stemming, no stop words, so every word can be searched) and prefix queries. The expressions must
-- stay identical to the ones in packages/db/src/files.ts or the planner cannot use these indexes.
-- Prisma cannot express expression indexes, hence raw SQL. GIN cannot lead with "instanceId" without
-- the btree_gin extension: the planner combines these with the ("instanceId", …) btree indexes.
CREATE INDEX "File_title_fts_idx" ON "File" USING GIN (to_tsvector('simple'::regconfig, coalesce("title", '')));
CREATE INDEX "File_description_fts_idx" ON "File" USING GIN (to_tsvector('simple'::regconfig, coalesce("description", '')));
