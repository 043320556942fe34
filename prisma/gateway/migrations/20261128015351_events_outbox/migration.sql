-- CreateTable
CREATE TABLE "EventCounter" (
    "instanceId" UUID NOT NULL,
    "last" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "EventCounter_pkey" PRIMARY KEY ("instanceId")
);

-- CreateTable
CREATE TABLE "Event" (
    "instanceId" UUID NOT NULL,
    "seq" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "actorKind" TEXT NOT NULL,
    "actorId" UUID,
    "object" JSONB NOT NULL,
    "address" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Event_pkey" PRIMARY KEY ("instanceId","seq")
);

-- CreateTable
CREATE TABLE "ReadActivity" (
    "instanceId" UUID NOT NULL,
    "id" BIGSERIAL NOT NULL,
    "type" TEXT NOT NULL,
    "actorKind" TEXT NOT NULL,
    "actorId" UUID,
    "object" JSONB NOT NULL,
    "address" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ReadActivity_pkey" PRIMARY KEY ("instanceId","id")
);

-- CreateTable
CREATE TABLE "Webhook" (
    "instanceId" UUID NOT NULL,
    "id" UUID NOT NULL,
    "appId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "namespaces" TEXT[],
    "deliveredSeq" BIGINT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'ok',
    "lastError" TEXT,
    "failingSince" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Webhook_pkey" PRIMARY KEY ("instanceId","id")
);

-- CreateIndex
CREATE INDEX "Event_instanceId_at_idx" ON "Event"("instanceId", "at");

-- CreateIndex
CREATE INDEX "ReadActivity_instanceId_at_idx" ON "ReadActivity"("instanceId", "at");

-- CreateIndex
CREATE INDEX "Webhook_instanceId_appId_idx" ON "Webhook"("instanceId", "appId");

-- AddForeignKey
ALTER TABLE "EventCounter" ADD CONSTRAINT "EventCounter_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "Event" ADD CONSTRAINT "Event_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "ReadActivity" ADD CONSTRAINT "ReadActivity_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;

-- AddForeignKey
ALTER TABLE "Webhook" ADD CONSTRAINT "Webhook_instanceId_fkey" FOREIGN KEY ("instanceId") REFERENCES "Instance"("id") ON DELETE CASCADE ON UPDATE NO ACTION;
