-- Dex keeps its own database (it may live on another server); the gateway's is POSTGRES_DB.
CREATE DATABASE pds_dex OWNER pds;
