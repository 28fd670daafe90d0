CREATE TABLE "nodes" (
	"runner_id" text PRIMARY KEY NOT NULL,
	"role" text NOT NULL,
	"builder" text NOT NULL,
	"claims" boolean NOT NULL,
	"seen_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "workflows" ADD COLUMN "builder" text;