-- AlterTable
ALTER TABLE "File" ADD COLUMN     "takenLocal" TIMESTAMP(3);
