ALTER TABLE `artifacts` ADD `bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `artifacts_workflow_idx` ON `artifacts` (`workflow_id`);