-- The operator side (issue 22): an instance's state (active, suspended by the operator, closing by its owner)
-- with the record of every change, its quotas (null: the cluster defaults) and when it was last active;
-- and the saved single-endpoint queries of the original's clients (combinators).

-- CreateEnum
CREATE TYPE "InstanceState" AS ENUM ('active', 'suspended', 'closing');

-- AlterTable
ALTER TABLE "Instance" ADD COLUMN     "lastActiveAt" TIMESTAMPTZ(3),
ADD COLUMN     "quotaBytes" BIGINT,
ADD COLUMN     "quotaRecordsBytes" BIGINT,
ADD COLUMN     "state" "InstanceState" NOT NULL DEFAULT 'active',
ADD COLUMN     "stateChangedAt" TIMESTAMPTZ(3),
ADD COLUMN     "stateReason" TEXT;

-- CreateTable
CREATE TABLE "InstanceStateChange" (
    "instanceId" UUID NOT NULL,
    "id" BIGSERIAL NOT NULL,
    "state" "InstanceState" NOT NULL,
    "reason" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "InstanceStateChange_pkey" PRIMARY KEY ("instanceId","id")
);

-- CreateTable
CREATE TABLE "DataCombinator" (
    "instanceId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "query" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DataCombinator_pkey" PRIMARY KEY ("instanceId","name")
);

-- AddForeignKey
ALTER TABLE "InstanceStateChange" ADD CONSTRAINT "InstanceStateChange_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "DataCombinator" ADD CONSTRAINT "DataCombinator_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
