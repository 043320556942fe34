-- Events are numbered after their change commits (packages/db/src/outbox.ts): a change writes its event
-- with a global "id" only, and the numbering step gives it the instance's next "seq".
ALTER TABLE "Event" DROP CONSTRAINT "Event_pkey";
ALTER TABLE "Event" ADD COLUMN "id" BIGSERIAL NOT NULL;
ALTER TABLE "Event" ALTER COLUMN "seq" DROP NOT NULL;
ALTER TABLE "Event" ADD CONSTRAINT "Event_pkey" PRIMARY KEY ("instanceId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Event_instanceId_seq_key" ON "Event"("instanceId", "seq");

-- The numbering step's work list: small, since events are numbered within a second of their commit.
CREATE INDEX "Event_unnumbered_idx" ON "Event"("instanceId", "id") WHERE "seq" IS NULL;
