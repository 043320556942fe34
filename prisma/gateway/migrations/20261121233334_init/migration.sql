-- CreateEnum
CREATE TYPE "UserKind" AS ENUM ('owner', 'user', 'application');

-- CreateEnum
CREATE TYPE "DexState" AS ENUM ('pending', 'registered', 'failed');

-- CreateEnum
CREATE TYPE "DataAccess" AS ENUM ('read', 'write');

-- CreateEnum
CREATE TYPE "FileStatus" AS ENUM ('New', 'Completed', 'Deleted');

-- CreateTable
CREATE TABLE "Instance" (
    "id" UUID NOT NULL,
    "address" TEXT NOT NULL,
    "publicKeyPem" TEXT NOT NULL,
    "privateKeyEnc" TEXT NOT NULL,
    "keyId" TEXT NOT NULL,
    "dexState" "DexState" NOT NULL DEFAULT 'pending',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Instance_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "User" (
    "id" UUID NOT NULL,
    "instanceId" UUID NOT NULL,
    "username" TEXT NOT NULL,
    "email" TEXT,
    "fullName" TEXT,
    "passwordHash" TEXT,
    "kind" "UserKind" NOT NULL,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Application" (
    "instanceId" UUID NOT NULL,
    "appId" TEXT NOT NULL,
    "record" JSONB NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,
    "receivedAt" TIMESTAMPTZ(3) NOT NULL,
    "setup" BOOLEAN NOT NULL DEFAULT false,
    "enabled" BOOLEAN NOT NULL DEFAULT false,
    "userId" UUID,

    CONSTRAINT "Application_pkey" PRIMARY KEY ("instanceId","appId")
);

-- CreateTable
CREATE TABLE "DataGrant" (
    "instanceId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "namespace" TEXT NOT NULL,
    "endpoint" TEXT NOT NULL DEFAULT '*',
    "access" "DataAccess" NOT NULL,

    CONSTRAINT "DataGrant_pkey" PRIMARY KEY ("instanceId","userId","namespace","endpoint","access")
);

-- CreateTable
CREATE TABLE "DataRecord" (
    "instanceId" UUID NOT NULL,
    "recordId" UUID NOT NULL,
    "namespace" TEXT NOT NULL,
    "endpoint" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DataRecord_pkey" PRIMARY KEY ("instanceId","recordId")
);

-- CreateTable
CREATE TABLE "File" (
    "instanceId" UUID NOT NULL,
    "fileId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "title" TEXT,
    "description" TEXT,
    "status" "FileStatus" NOT NULL DEFAULT 'New',
    "size" BIGINT,
    "contentPublic" BOOLEAN NOT NULL DEFAULT false,
    "uploaderId" UUID NOT NULL,
    "dateCreated" TIMESTAMPTZ(3) NOT NULL,
    "lastUpdated" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "File_pkey" PRIMARY KEY ("instanceId","fileId")
);

-- CreateTable
CREATE TABLE "FilePermission" (
    "instanceId" UUID NOT NULL,
    "fileId" TEXT NOT NULL,
    "userId" UUID NOT NULL,
    "contentReadable" BOOLEAN NOT NULL,

    CONSTRAINT "FilePermission_pkey" PRIMARY KEY ("instanceId","fileId","userId")
);

-- CreateIndex
CREATE UNIQUE INDEX "Instance_address_key" ON "Instance"("address");

-- CreateIndex
CREATE UNIQUE INDEX "User_instanceId_username_key" ON "User"("instanceId", "username");

-- CreateIndex
CREATE UNIQUE INDEX "User_instanceId_id_key" ON "User"("instanceId", "id");

-- CreateIndex
CREATE INDEX "DataRecord_instanceId_namespace_endpoint_createdAt_idx" ON "DataRecord"("instanceId", "namespace", "endpoint", "createdAt");

-- CreateIndex
CREATE INDEX "File_instanceId_name_idx" ON "File"("instanceId", "name");

-- CreateIndex
CREATE INDEX "File_instanceId_source_idx" ON "File"("instanceId", "source");

-- CreateIndex
CREATE INDEX "File_instanceId_lastUpdated_idx" ON "File"("instanceId", "lastUpdated" DESC);

-- CreateIndex
CREATE INDEX "File_instanceId_status_dateCreated_idx" ON "File"("instanceId", "status", "dateCreated");

-- CreateIndex
CREATE INDEX "File_tags_idx" ON "File" USING GIN ("tags");

-- CreateIndex
CREATE INDEX "FilePermission_instanceId_userId_idx" ON "FilePermission"("instanceId", "userId");

-- AddForeignKey
ALTER TABLE "User" ADD CONSTRAINT "User_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "FilePermission" ADD CONSTRAINT "FilePermission_instanceId_fileId_fkey" FOREIGN KEY ("instanceId", "fileId") REFERENCES "File"("instanceId", "fileId") ON DELETE CASCADE ON UPDATE CASCADE;
