-- AlterTable
ALTER TABLE "User" ADD COLUMN     "tokensValidAfter" TIMESTAMPTZ(0),
ADD COLUMN     "totpEnabled" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "totpLastStep" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "totpRecoveryHashes" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "totpSecretEnc" TEXT;

-- CreateTable
CREATE TABLE "PasswordReset" (
    "instanceId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "PasswordReset_pkey" PRIMARY KEY ("instanceId","userId")
);

-- CreateIndex
CREATE UNIQUE INDEX "PasswordReset_instanceId_tokenHash_key" ON "PasswordReset"("instanceId", "tokenHash");

-- AddForeignKey
ALTER TABLE "PasswordReset" ADD CONSTRAINT "PasswordReset_instanceId_userId_fkey" FOREIGN KEY ("instanceId", "userId") REFERENCES "User"("instanceId", "id") ON DELETE CASCADE ON UPDATE NO ACTION;
