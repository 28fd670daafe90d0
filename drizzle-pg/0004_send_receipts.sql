CREATE TABLE "send_receipts" (
	"user_id" text NOT NULL,
	"request_id" text NOT NULL,
	"result" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "send_receipts_user_id_request_id_pk" PRIMARY KEY("user_id","request_id")
);
--> statement-breakpoint
ALTER TABLE "send_receipts" ADD CONSTRAINT "send_receipts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;