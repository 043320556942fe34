-- Record usage is kept on several rows per instance ("share"), each with an allowance of the quota its
-- writers may use without waiting for one another (packages/db/src/usage.ts); files stay on share 0.
ALTER TABLE "InstanceUsage" DROP CONSTRAINT "InstanceUsage_pkey";
ALTER TABLE "InstanceUsage" ADD COLUMN "share" SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE "InstanceUsage" ADD COLUMN "recordAllowance" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "InstanceUsage" ADD COLUMN "allowanceQuota" BIGINT;
ALTER TABLE "InstanceUsage" ADD CONSTRAINT "InstanceUsage_pkey" PRIMARY KEY ("instanceId", "share");
