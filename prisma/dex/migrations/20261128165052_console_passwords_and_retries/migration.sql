-- AlterTable
ALTER TABLE "Admin" ADD COLUMN     "passwordHash" TEXT;

-- AlterTable
ALTER TABLE "AppPush" ADD COLUMN     "retries" INTEGER NOT NULL DEFAULT 0;
