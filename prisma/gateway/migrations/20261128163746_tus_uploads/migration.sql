-- Resumable (tus) uploads (issue 34): one row per upload under way, its store state, lease and last activity.
-- CreateTable
CREATE TABLE "FileUpload" (
    "instanceId" UUID NOT NULL,
    "id" TEXT NOT NULL,
    "fileId" TEXT NOT NULL,
    "length" BIGINT NOT NULL,
    "offset" BIGINT NOT NULL DEFAULT 0,
    "state" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "touchedAt" TIMESTAMPTZ(3) NOT NULL,
    "lease" TEXT,
    "leaseUntil" TIMESTAMPTZ(3),

    CONSTRAINT "FileUpload_pkey" PRIMARY KEY ("instanceId","id")
);

-- CreateIndex
CREATE INDEX "FileUpload_instanceId_fileId_idx" ON "FileUpload"("instanceId", "fileId");

-- CreateIndex
CREATE INDEX "FileUpload_touchedAt_idx" ON "FileUpload"("touchedAt");

-- AddForeignKey
ALTER TABLE "FileUpload" ADD CONSTRAINT "FileUpload_instanceId_fileId_fkey" FOREIGN KEY ("instanceId", "fileId") REFERENCES "File"("instanceId", "fileId") ON DELETE CASCADE ON UPDATE NO ACTION;
