-- AlterTable
ALTER TABLE "File" ADD COLUMN     "takenAt" TIMESTAMPTZ(3);

-- Pictures made before this were dated by their upload's dateCreated; their thumbnail job set no EXIF date.
UPDATE "File" SET "takenAt" = "dateCreated" WHERE "thumbnail";
-- Every picture of the timeline has its date: a NULL would sort outside every page's cursor.
ALTER TABLE "File" ADD CONSTRAINT "File_picture_dated" CHECK (NOT "thumbnail" OR "takenAt" IS NOT NULL);

-- The photo timeline (GET /files/photos): the pictures that have a thumbnail, the most recently taken
-- first, a page at a time after a (takenAt, fileId) cursor, read straight from this index.
DROP INDEX "File_photos_idx";
CREATE INDEX "File_photos_idx" ON "File"("instanceId", "takenAt" DESC, "fileId" DESC) WHERE "status" = 'Completed' AND "thumbnail";
