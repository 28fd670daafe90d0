CREATE TABLE "answer_checks" (
	"id" text PRIMARY KEY NOT NULL,
	"question_id" text NOT NULL,
	"workflow_id" text NOT NULL,
	"answer" text NOT NULL,
	"checked_by" text,
	"verdict" text,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "question_file_pages" (
	"question_id" text PRIMARY KEY NOT NULL,
	"pages" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "answer_checks" ADD CONSTRAINT "answer_checks_question_id_questions_id_fk" FOREIGN KEY ("question_id") REFERENCES "public"."questions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "answer_checks" ADD CONSTRAINT "answer_checks_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "question_file_pages" ADD CONSTRAINT "question_file_pages_question_id_questions_id_fk" FOREIGN KEY ("question_id") REFERENCES "public"."questions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "answer_checks_workflow_idx" ON "answer_checks" USING btree ("workflow_id");