-- Search returns files newest lastUpdated first, ties by fileId. An index in exactly that order
-- serves a page straight from the index, for the owner and (probing FilePermission's primary key
-- per file) for a user, without sorting. It replaces the index on (instanceId, lastUpdated) alone.
CREATE INDEX "File_instanceId_lastUpdated_fileId_idx" ON "File"("instanceId", "lastUpdated" DESC, "fileId");

DROP INDEX "File_instanceId_lastUpdated_idx";
