CREATE TABLE `update_channels` (
	`project_id` text PRIMARY KEY NOT NULL,
	`token` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `update_channels_token_unique` ON `update_channels` (`token`);--> statement-breakpoint
ALTER TABLE `artifacts` ADD `blob_id` text;