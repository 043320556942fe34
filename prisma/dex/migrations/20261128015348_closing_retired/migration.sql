-- Closing an instance (issue 19): an erased instance's address is retired at dex; its key is forgotten.

-- AlterEnum
ALTER TYPE "InstanceState" ADD VALUE 'retired';

-- AlterTable
ALTER TABLE "RegisteredInstance" ADD COLUMN     "retiredAt" TIMESTAMPTZ(3);
