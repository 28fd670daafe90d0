CREATE TABLE `releases` (
	`workflow_id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`channel` text NOT NULL,
	`rollout_percent` integer NOT NULL,
	`rollback_of` integer,
	`number` integer,
	`previous_number` integer,
	`platforms` text DEFAULT '[]' NOT NULL,
	`sdks` text DEFAULT '[]' NOT NULL,
	`changes` text,
	`source` blob,
	`created_at` text NOT NULL,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `releases_project_number_idx` ON `releases` (`project_id`,`number`);--> statement-breakpoint
CREATE INDEX `releases_project_channel_idx` ON `releases` (`project_id`,`channel`,`number`);--> statement-breakpoint
-- Deploys made before releases existed: each is a 100 % deploy of the production channel (docs/releases.md "Upgrading").
INSERT INTO `releases` (`workflow_id`, `project_id`, `channel`, `rollout_percent`, `number`, `platforms`, `created_at`)
SELECT `workflow_id`, `project_id`, 'production', 100, `number`, json_group_array(`platform`), min(`created_at`)
FROM `artifacts`
WHERE `kind` = 'deployment' AND `number` IS NOT NULL AND `workflow_id` IS NOT NULL
GROUP BY `workflow_id`, `project_id`, `number`;
