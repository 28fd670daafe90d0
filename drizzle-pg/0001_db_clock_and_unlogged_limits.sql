-- Written by hand (drizzle-kit generate --custom): what the schema file cannot say.
-- svc_now_ms(): the database's clock in ms since the Unix epoch. Leases are written and compared
-- with it, so a node whose clock is wrong cannot take over a live workflow (docs/postgresql.md).
-- clock_timestamp(), not now(): now() is frozen at the start of the transaction.
CREATE OR REPLACE FUNCTION svc_now_ms() RETURNS bigint
  LANGUAGE sql VOLATILE PARALLEL SAFE
  AS $$ SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint $$;
--> statement-breakpoint
-- Request-rate counters live for a minute: no write-ahead log for them (lost on a crash, by design).
ALTER TABLE "rate_limits" SET UNLOGGED;
