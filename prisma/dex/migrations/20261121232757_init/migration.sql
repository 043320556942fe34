-- CreateEnum
CREATE TYPE "InstanceState" AS ENUM ('pending', 'registered', 'key-mismatch');

-- CreateTable
CREATE TABLE "CertifiedCluster" (
    "domain" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CertifiedCluster_pkey" PRIMARY KEY ("domain")
);

-- CreateTable
CREATE TABLE "RegisteredInstance" (
    "address" TEXT NOT NULL,
    "clusterDomain" TEXT NOT NULL,
    "publicKeyPem" TEXT,
    "fingerprint" TEXT,
    "pendingKeyPem" TEXT,
    "state" "InstanceState" NOT NULL DEFAULT 'pending',
    "registeredAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "RegisteredInstance_pkey" PRIMARY KEY ("address")
);

-- CreateTable
CREATE TABLE "Admin" (
    "address" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Admin_pkey" PRIMARY KEY ("address")
);

-- CreateTable
CREATE TABLE "AppRecord" (
    "appId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "record" JSONB NOT NULL,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AppRecord_pkey" PRIMARY KEY ("appId","version")
);

-- CreateTable
CREATE TABLE "AppPush" (
    "id" UUID NOT NULL,
    "appId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'queued',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMPTZ(3),

    CONSTRAINT "AppPush_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "RegisteredInstance_clusterDomain_idx" ON "RegisteredInstance"("clusterDomain");

-- CreateIndex
CREATE INDEX "AppPush_address_idx" ON "AppPush"("address");

-- CreateIndex
CREATE UNIQUE INDEX "AppPush_appId_version_address_key" ON "AppPush"("appId", "version", "address");
