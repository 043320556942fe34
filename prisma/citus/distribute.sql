-- Distributes the gateway's tables over a Citus cluster (docs/deploy.md, "Distributed PostgreSQL (Citus)").
-- Run once, with psql on the coordinator, on a database migrated to 20261125155932_citus_ready or later and
-- before any gateway starts:
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f prisma/citus/distribute.sql
-- "Instance", "RetiredAddress" and the operator console's tables ("Operator", "ConsoleSession", "AuditEntry": the
-- cluster's own, no instance's; written only by an operator's rare actions) become reference tables (a copy on every
-- node); every other table is distributed by
-- "instanceId" and colocated with "User", so one instance's rows of every table live on one node.
-- Citus will not distribute a table that a local table still references, so the foreign keys are saved,
-- dropped, and added again, unchanged, once every table is distributed.
-- packages/db/test/citus-schema.test.ts runs this file (with stand-ins for the two Citus functions).

CREATE TEMP TABLE pds_foreign_keys AS
  SELECT c.conrelid::regclass::text AS "table", c.conname AS "name", pg_get_constraintdef(c.oid) AS "definition"
  FROM pg_constraint c
  WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace;

DO $$
DECLARE fk record;
BEGIN
  FOR fk IN SELECT * FROM pds_foreign_keys LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk."table", fk."name");
  END LOOP;
END $$;

SELECT create_reference_table('"Instance"');
SELECT create_distributed_table('"User"', 'instanceId');
SELECT create_distributed_table('"File"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"FilePermission"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"FileIdCounter"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"Application"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"DataGrant"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"DataRecord"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"DataRecordLink"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"DataBundle"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"DataDebit"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"DataDebitPermission"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"DataCombinator"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"InstanceStateChange"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"InstanceUsage"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"PasswordReset"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"EventCounter"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"Event"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"ReadActivity"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"Webhook"', 'instanceId', colocate_with => '"User"');
SELECT create_reference_table('"RetiredAddress"');
SELECT create_distributed_table('"PortabilityJob"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"ShareLink"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"ShareLinkFile"', 'instanceId', colocate_with => '"User"');
SELECT create_distributed_table('"FileUpload"', 'instanceId', colocate_with => '"User"');
SELECT create_reference_table('"Operator"');
SELECT create_reference_table('"ConsoleSession"');
SELECT create_reference_table('"AuditEntry"');

DO $$
DECLARE fk record;
BEGIN
  FOR fk IN SELECT * FROM pds_foreign_keys LOOP
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', fk."table", fk."name", fk."definition");
  END LOOP;
END $$;

DROP TABLE pds_foreign_keys;
