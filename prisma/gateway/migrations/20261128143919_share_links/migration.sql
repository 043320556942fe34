-- Share links (issue 33): a hashed token naming files, with expiry, password and download limit; its files in order.
-- CreateTable
CREATE TABLE "ShareLink" (
    "instanceId" UUID NOT NULL,
    "id" UUID NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "passwordHash" TEXT,
    "expiresAt" TIMESTAMPTZ(3),
    "downloadLimit" INTEGER,
    "downloads" INTEGER NOT NULL DEFAULT 0,
    "views" INTEGER NOT NULL DEFAULT 0,
    "lastUsedAt" TIMESTAMPTZ(3),
    "allowDownload" BOOLEAN NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "revokedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ShareLink_pkey" PRIMARY KEY ("instanceId","id")
);

-- CreateTable
CREATE TABLE "ShareLinkFile" (
    "instanceId" UUID NOT NULL,
    "linkId" UUID NOT NULL,
    "fileId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,

    CONSTRAINT "ShareLinkFile_pkey" PRIMARY KEY ("instanceId","linkId","fileId")
);

-- CreateIndex
CREATE INDEX "ShareLink_instanceId_createdAt_idx" ON "ShareLink"("instanceId", "createdAt" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "ShareLink_instanceId_tokenHash_key" ON "ShareLink"("instanceId", "tokenHash");

-- CreateIndex
CREATE INDEX "ShareLinkFile_instanceId_fileId_idx" ON "ShareLinkFile"("instanceId", "fileId");

-- AddForeignKey
ALTER TABLE "ShareLink" ADD CONSTRAINT "ShareLink_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "ShareLinkFile" ADD CONSTRAINT "ShareLinkFile_instanceId_linkId_fkey" FOREIGN KEY ("instanceId", "linkId") REFERENCES "ShareLink"("instanceId", "id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "ShareLinkFile" ADD CONSTRAINT "ShareLinkFile_instanceId_fileId_fkey" FOREIGN KEY ("instanceId", "fileId") REFERENCES "File"("instanceId", "fileId") ON DELETE CASCADE ON UPDATE NO ACTION;
