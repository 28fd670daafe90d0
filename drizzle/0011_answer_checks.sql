CREATE TABLE `answer_checks` (
	`id` text PRIMARY KEY NOT NULL,
	`question_id` text NOT NULL,
	`workflow_id` text NOT NULL,
	`answer` text NOT NULL,
	`checked_by` text,
	`verdict` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`question_id`) REFERENCES `questions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workflow_id`) REFERENCES `workflows`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `answer_checks_workflow_idx` ON `answer_checks` (`workflow_id`);--> statement-breakpoint
CREATE TABLE `question_file_pages` (
	`question_id` text PRIMARY KEY NOT NULL,
	`pages` text NOT NULL,
	FOREIGN KEY (`question_id`) REFERENCES `questions`(`id`) ON UPDATE no action ON DELETE cascade
);
