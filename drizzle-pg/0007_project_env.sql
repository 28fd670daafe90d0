CREATE TABLE "project_env" (
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"value" text NOT NULL,
	"secret" boolean NOT NULL,
	"updated_at" text NOT NULL,
	CONSTRAINT "project_env_project_id_name_pk" PRIMARY KEY("project_id","name")
);
--> statement-breakpoint
ALTER TABLE "project_env" ADD CONSTRAINT "project_env_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;