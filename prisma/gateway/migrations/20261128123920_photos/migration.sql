-- AlterTable
ALTER TABLE "File" ADD COLUMN     "height" INTEGER,
ADD COLUMN     "width" INTEGER;

-- The photo timeline (GET /files/photos): the pictures that have a thumbnail, newest first, a page at a
-- time after a (dateCreated, fileId) cursor, read straight from this index.
CREATE INDEX "File_photos_idx" ON "File"("instanceId", "dateCreated" DESC, "fileId" DESC) WHERE "status" = 'Completed' AND "thumbnail";
