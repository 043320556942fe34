-- Apps: remember which app version the owner set up, so a newer push shows needsUpdating.
ALTER TABLE "Application" ADD COLUMN "setupVersion" INTEGER;

-- Data records: a stable insertion order (the records of one array insert share createdAt).
ALTER TABLE "DataRecord" ADD COLUMN "seq" BIGSERIAL NOT NULL;

DROP INDEX "DataRecord_instanceId_namespace_endpoint_createdAt_idx";
CREATE INDEX "DataRecord_instanceId_namespace_endpoint_seq_idx" ON "DataRecord"("instanceId", "namespace", "endpoint", "seq");
