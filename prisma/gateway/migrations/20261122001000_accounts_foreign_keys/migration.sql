-- Rows that name a user or an instance go with it. Permissions and grants reference the user through
-- (instanceId, userId), so the database itself refuses a row naming another instance's user.
-- AddForeignKey
ALTER TABLE "Application" ADD CONSTRAINT "Application_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DataGrant" ADD CONSTRAINT "DataGrant_instanceId_userId_fkey" FOREIGN KEY ("instanceId", "userId") REFERENCES "User"("instanceId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DataRecord" ADD CONSTRAINT "DataRecord_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "File" ADD CONSTRAINT "File_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "FilePermission" ADD CONSTRAINT "FilePermission_instanceId_userId_fkey" FOREIGN KEY ("instanceId", "userId") REFERENCES "User"("instanceId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "FileIdCounter" ADD CONSTRAINT "FileIdCounter_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE CASCADE;

