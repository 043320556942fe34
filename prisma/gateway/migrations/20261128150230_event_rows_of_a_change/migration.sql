-- The events of one change of one type (the records of a batch, the files of a bulk call) share one
-- outbox row: "object" is then the list of their objects and "seq" the number of the last of them
-- (packages/db/src/outbox.ts, events.ts). A change costs a row, not a row per record.
ALTER TABLE "Event" ADD COLUMN "count" INTEGER NOT NULL DEFAULT 1;
