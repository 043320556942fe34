-- Issue 22 part B: the usage of each instance kept by the statements that change it (quotas are checked
-- against it), and a trash for deleted files (trashedAt set while one waits there, bytes kept).

-- AlterTable
ALTER TABLE "File" ADD COLUMN     "trashedAt" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "InstanceUsage" (
    "instanceId" UUID NOT NULL,
    "files" BIGINT NOT NULL DEFAULT 0,
    "fileBytes" BIGINT NOT NULL DEFAULT 0,
    "records" BIGINT NOT NULL DEFAULT 0,
    "recordBytes" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "InstanceUsage_pkey" PRIMARY KEY ("instanceId")
);

-- CreateIndex
CREATE INDEX "File_instanceId_trashedAt_idx" ON "File"("instanceId", "trashedAt");

-- AddForeignKey
ALTER TABLE "InstanceUsage" ADD CONSTRAINT "InstanceUsage_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- The usage of what exists already, counted once here; from now on the statements keep it.
INSERT INTO "InstanceUsage" ("instanceId", "files", "fileBytes", "records", "recordBytes")
SELECT i."id",
  coalesce(f."files", 0), coalesce(f."fileBytes", 0), coalesce(r."records", 0), coalesce(r."recordBytes", 0)
FROM "Instance" i
LEFT JOIN (SELECT "instanceId", count(*) AS "files", sum(coalesce("size", 0)) AS "fileBytes"
  FROM "File" WHERE "status" = 'Completed' GROUP BY "instanceId") f ON f."instanceId" = i."id"
LEFT JOIN (SELECT "instanceId", count(*) AS "records", sum(octet_length("data"::text)) AS "recordBytes"
  FROM "DataRecord" GROUP BY "instanceId") r ON r."instanceId" = i."id";
