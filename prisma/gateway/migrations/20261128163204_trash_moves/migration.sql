-- AlterTable
ALTER TABLE "File" ADD COLUMN     "bytesMoving" BOOLEAN NOT NULL DEFAULT false;

-- The moves a crash left unfinished, which the worker resumes (FileRepository.unsettled): a handful of
-- rows at most, found without reading the table.
CREATE INDEX "File_bytes_moving_idx" ON "File"("instanceId", "fileId") WHERE "bytesMoving";
