-- Closing an instance (issue 19): when its grace period ends, and the addresses of erased instances,
-- which are never signed up for again.

-- AlterTable
ALTER TABLE "Instance" ADD COLUMN     "closeAfter" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "RetiredAddress" (
    "address" TEXT NOT NULL,
    "retiredAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "RetiredAddress_pkey" PRIMARY KEY ("address")
);
