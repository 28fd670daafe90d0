CREATE TABLE `project_env` (
	`project_id` text NOT NULL,
	`name` text NOT NULL,
	`value` text NOT NULL,
	`secret` integer NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`project_id`, `name`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
