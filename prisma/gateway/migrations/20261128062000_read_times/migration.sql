-- Identical reads within one write interval of a gateway are kept as one entry with how many they were.
ALTER TABLE "ReadActivity" ADD COLUMN "times" INTEGER NOT NULL DEFAULT 1;
