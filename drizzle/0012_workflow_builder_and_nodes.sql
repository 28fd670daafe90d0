CREATE TABLE `nodes` (
	`runner_id` text PRIMARY KEY NOT NULL,
	`role` text NOT NULL,
	`builder` text NOT NULL,
	`claims` integer NOT NULL,
	`seen_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `workflows` ADD `builder` text;