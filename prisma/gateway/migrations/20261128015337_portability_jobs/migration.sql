-- CreateTable
CREATE TABLE "PortabilityJob" (
    "instanceId" UUID NOT NULL,
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "bytes" BIGINT NOT NULL DEFAULT 0,
    "files" INTEGER NOT NULL DEFAULT 0,
    "records" INTEGER NOT NULL DEFAULT 0,
    "progress" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "result" JSONB,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMPTZ(3),
    "expiresAt" TIMESTAMPTZ(3),

    CONSTRAINT "PortabilityJob_pkey" PRIMARY KEY ("instanceId","id")
);

-- CreateIndex
CREATE INDEX "PortabilityJob_instanceId_kind_createdAt_idx" ON "PortabilityJob"("instanceId", "kind", "createdAt");

-- AddForeignKey
ALTER TABLE "PortabilityJob" ADD CONSTRAINT "PortabilityJob_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- One running export and one running import per instance: a second start finds the key taken (409).
-- Partial, so Prisma's schema cannot say it; kept here like File_new_createdAt_idx.
CREATE UNIQUE INDEX "PortabilityJob_one_running_idx" ON "PortabilityJob"("instanceId", "kind") WHERE "status" = 'running';
