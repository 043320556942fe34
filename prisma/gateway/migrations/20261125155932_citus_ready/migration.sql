-- Ready for distributed PostgreSQL (Citus, docs/deploy.md): every primary key, unique constraint and
-- foreign key of a tenant table includes "instanceId" (User's key was "id" alone; the unique
-- ("instanceId", "id") that the foreign keys used becomes the key), and no foreign key cascades updates
-- (Prisma's default ON UPDATE CASCADE, which Citus refuses between distributed tables; no key is ever
-- updated). PostgreSQL cannot change a foreign key's actions in place: each is dropped and added again.

-- DropForeignKey
ALTER TABLE "User" DROP CONSTRAINT "User_instanceId_fkey";

-- DropForeignKey
ALTER TABLE "Application" DROP CONSTRAINT "Application_instanceId_fkey";

-- DropForeignKey
ALTER TABLE "DataGrant" DROP CONSTRAINT "DataGrant_instanceId_userId_fkey";

-- DropForeignKey
ALTER TABLE "DataRecord" DROP CONSTRAINT "DataRecord_instanceId_fkey";

-- DropForeignKey
ALTER TABLE "DataRecordLink" DROP CONSTRAINT "DataRecordLink_instanceId_recordId_fkey";

-- DropForeignKey
ALTER TABLE "DataRecordLink" DROP CONSTRAINT "DataRecordLink_instanceId_linkedId_fkey";

-- DropForeignKey
ALTER TABLE "DataBundle" DROP CONSTRAINT "DataBundle_instanceId_fkey";

-- DropForeignKey
ALTER TABLE "DataDebit" DROP CONSTRAINT "DataDebit_instanceId_fkey";

-- DropForeignKey
ALTER TABLE "DataDebitPermission" DROP CONSTRAINT "DataDebitPermission_instanceId_debitKey_fkey";

-- DropForeignKey
ALTER TABLE "DataDebitPermission" DROP CONSTRAINT "DataDebitPermission_instanceId_bundleName_fkey";

-- DropForeignKey
ALTER TABLE "File" DROP CONSTRAINT "File_instanceId_fkey";

-- DropForeignKey
ALTER TABLE "FilePermission" DROP CONSTRAINT "FilePermission_instanceId_fileId_fkey";

-- DropForeignKey
ALTER TABLE "FilePermission" DROP CONSTRAINT "FilePermission_instanceId_userId_fkey";

-- DropForeignKey
ALTER TABLE "FileIdCounter" DROP CONSTRAINT "FileIdCounter_instanceId_fkey";

-- DropIndex
DROP INDEX "User_instanceId_id_key";

-- AlterTable
ALTER TABLE "User" DROP CONSTRAINT "User_pkey",
ADD CONSTRAINT "User_pkey" PRIMARY KEY ("instanceId", "id");

-- AddForeignKey
ALTER TABLE "User" ADD CONSTRAINT "User_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "Application" ADD CONSTRAINT "Application_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "DataGrant" ADD CONSTRAINT "DataGrant_instanceId_userId_fkey" FOREIGN KEY ("instanceId", "userId") REFERENCES "User"("instanceId", "id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "DataRecord" ADD CONSTRAINT "DataRecord_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "DataRecordLink" ADD CONSTRAINT "DataRecordLink_instanceId_recordId_fkey" FOREIGN KEY ("instanceId", "recordId") REFERENCES "DataRecord"("instanceId", "recordId") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "DataRecordLink" ADD CONSTRAINT "DataRecordLink_instanceId_linkedId_fkey" FOREIGN KEY ("instanceId", "linkedId") REFERENCES "DataRecord"("instanceId", "recordId") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "DataBundle" ADD CONSTRAINT "DataBundle_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "DataDebit" ADD CONSTRAINT "DataDebit_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "DataDebitPermission" ADD CONSTRAINT "DataDebitPermission_instanceId_debitKey_fkey" FOREIGN KEY ("instanceId", "debitKey") REFERENCES "DataDebit"("instanceId", "key") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "DataDebitPermission" ADD CONSTRAINT "DataDebitPermission_instanceId_bundleName_fkey" FOREIGN KEY ("instanceId", "bundleName") REFERENCES "DataBundle"("instanceId", "name") ON DELETE RESTRICT ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "File" ADD CONSTRAINT "File_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "FilePermission" ADD CONSTRAINT "FilePermission_instanceId_fileId_fkey" FOREIGN KEY ("instanceId", "fileId") REFERENCES "File"("instanceId", "fileId") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "FilePermission" ADD CONSTRAINT "FilePermission_instanceId_userId_fkey" FOREIGN KEY ("instanceId", "userId") REFERENCES "User"("instanceId", "id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "FileIdCounter" ADD CONSTRAINT "FileIdCounter_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
