-- AlterTable
ALTER TABLE "AppPush" ADD COLUMN     "pushedBy" TEXT,
ADD COLUMN     "setUp" BOOLEAN;

-- CreateTable
CREATE TABLE "ConsoleSession" (
    "tokenHash" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ConsoleSession_pkey" PRIMARY KEY ("tokenHash")
);

-- CreateTable
CREATE TABLE "AuditEntry" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target" TEXT,
    "details" JSONB,
    "client" TEXT NOT NULL,
    "status" INTEGER NOT NULL,

    CONSTRAINT "AuditEntry_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ConsoleSession_actor_idx" ON "ConsoleSession"("actor");

-- CreateIndex
CREATE INDEX "AuditEntry_at_idx" ON "AuditEntry"("at");
