-- The write path of a record is one batch of plain statements (packages/db/src/data.ts): the usage, the
-- rows and their events, each planned alone (on Citus: on the instance's node).

-- A record's bytes are counted by the gateway, which has its JSON text at hand, instead of being
-- computed from the stored jsonb by every statement that counts them. Existing rows keep the count
-- their usage holds.
ALTER TABLE "DataRecord" ADD COLUMN "bytes" INTEGER;
UPDATE "DataRecord" SET "bytes" = octet_length("data"::text);
ALTER TABLE "DataRecord" ALTER COLUMN "bytes" SET NOT NULL;

-- A write takes its bytes out of its share's allowance without asking first: a write the allowance
-- cannot cover breaks this constraint, its batch is undone, and the writer refills (usage.ts). Old
-- allowances were granted under the former rule: taken back (the next writes refill).
ALTER TABLE "InstanceUsage" DROP COLUMN "allowanceQuota",
ADD COLUMN "allowanceDefault" BIGINT;
UPDATE "InstanceUsage" SET "recordAllowance" = 0 WHERE "recordAllowance" <> 0;
ALTER TABLE "InstanceUsage" ADD CONSTRAINT "InstanceUsage_allowance_covers" CHECK ("recordAllowance" >= 0);

-- Events are numbered only for instances something listens to, so most never get a number: the index
-- of numbers holds the numbered ones only, and an event written costs no entry in it.
DROP INDEX "Event_instanceId_seq_key";
CREATE UNIQUE INDEX "Event_instanceId_seq_key" ON "Event"("instanceId", "seq") WHERE "seq" IS NOT NULL;
