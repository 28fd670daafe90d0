CREATE TABLE "releases" (
	"workflow_id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"channel" text NOT NULL,
	"rollout_percent" integer NOT NULL,
	"rollback_of" integer,
	"number" integer,
	"previous_number" integer,
	"platforms" text DEFAULT '[]' NOT NULL,
	"sdks" text DEFAULT '[]' NOT NULL,
	"changes" text,
	"source" "bytea",
	"created_at" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "releases" ADD CONSTRAINT "releases_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "releases" ADD CONSTRAINT "releases_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "releases_project_number_idx" ON "releases" USING btree ("project_id","number");--> statement-breakpoint
CREATE INDEX "releases_project_channel_idx" ON "releases" USING btree ("project_id","channel","number");--> statement-breakpoint
-- Deploys made before releases existed: each is a 100 % deploy of the production channel (docs/releases.md "Upgrading").
INSERT INTO "releases" ("workflow_id", "project_id", "channel", "rollout_percent", "number", "platforms", "created_at")
SELECT "workflow_id", "project_id", 'production', 100, "number", json_agg("platform" ORDER BY "created_at")::text, min("created_at")
FROM "artifacts"
WHERE "kind" = 'deployment' AND "number" IS NOT NULL AND "workflow_id" IS NOT NULL
GROUP BY "workflow_id", "project_id", "number";
