CREATE TABLE `process_groups` (
	`host` text NOT NULL,
	`pgid` integer NOT NULL,
	`workflow_id` text NOT NULL,
	`project_id` text NOT NULL,
	`runner_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`host`, `pgid`),
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `process_groups_project_idx` ON `process_groups` (`project_id`);--> statement-breakpoint
ALTER TABLE `workflows` ADD `lease_expires_at` integer;