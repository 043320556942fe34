-- Data records: who wrote each one, links between records, bundles and data debits (issue 10).
-- AlterTable
ALTER TABLE "DataRecord" ADD COLUMN     "userId" UUID;

-- CreateTable
CREATE TABLE "DataRecordLink" (
    "instanceId" UUID NOT NULL,
    "recordId" UUID NOT NULL,
    "linkedId" UUID NOT NULL,

    CONSTRAINT "DataRecordLink_pkey" PRIMARY KEY ("instanceId","recordId","linkedId")
);

-- CreateTable
CREATE TABLE "DataBundle" (
    "instanceId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "query" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DataBundle_pkey" PRIMARY KEY ("instanceId","name")
);

-- CreateTable
CREATE TABLE "DataDebit" (
    "instanceId" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "requestClientName" TEXT NOT NULL,
    "requestClientUrl" TEXT NOT NULL,
    "requestClientLogoUrl" TEXT NOT NULL,
    "requestApplicationId" TEXT,
    "requestDescription" TEXT,
    "holderId" UUID,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DataDebit_pkey" PRIMARY KEY ("instanceId","key")
);

-- CreateTable
CREATE TABLE "DataDebitPermission" (
    "instanceId" UUID NOT NULL,
    "debitKey" TEXT NOT NULL,
    "id" BIGSERIAL NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "purpose" TEXT NOT NULL,
    "start" TIMESTAMPTZ(3) NOT NULL,
    "period" INTEGER NOT NULL,
    "cancelAtPeriodEnd" BOOLEAN NOT NULL,
    "termsUrl" TEXT NOT NULL,
    "bundleName" TEXT NOT NULL,
    "accepted" BOOLEAN NOT NULL DEFAULT false,
    "canceledAt" TIMESTAMPTZ(3),

    CONSTRAINT "DataDebitPermission_pkey" PRIMARY KEY ("instanceId","debitKey","id")
);

-- CreateIndex
CREATE INDEX "DataRecordLink_instanceId_linkedId_idx" ON "DataRecordLink"("instanceId", "linkedId");

-- CreateIndex
CREATE INDEX "DataDebitPermission_instanceId_bundleName_idx" ON "DataDebitPermission"("instanceId", "bundleName");

-- CreateIndex
CREATE INDEX "DataRecord_instanceId_namespace_seq_idx" ON "DataRecord"("instanceId", "namespace", "seq");

-- AddForeignKey
ALTER TABLE "DataRecordLink" ADD CONSTRAINT "DataRecordLink_instanceId_recordId_fkey" FOREIGN KEY ("instanceId", "recordId") REFERENCES "DataRecord"("instanceId", "recordId") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DataRecordLink" ADD CONSTRAINT "DataRecordLink_instanceId_linkedId_fkey" FOREIGN KEY ("instanceId", "linkedId") REFERENCES "DataRecord"("instanceId", "recordId") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DataBundle" ADD CONSTRAINT "DataBundle_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DataDebit" ADD CONSTRAINT "DataDebit_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DataDebitPermission" ADD CONSTRAINT "DataDebitPermission_instanceId_debitKey_fkey" FOREIGN KEY ("instanceId", "debitKey") REFERENCES "DataDebit"("instanceId", "key") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DataDebitPermission" ADD CONSTRAINT "DataDebitPermission_instanceId_bundleName_fkey" FOREIGN KEY ("instanceId", "bundleName") REFERENCES "DataBundle"("instanceId", "name") ON DELETE RESTRICT ON UPDATE CASCADE;

