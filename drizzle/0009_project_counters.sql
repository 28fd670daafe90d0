ALTER TABLE `projects` ADD `message_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `projects` ADD `deployment_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `projects` ADD `workspace_version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Backfilled from what the tables hold: the next message and deploy number follow the last ones.
UPDATE `projects` SET `message_seq` = (SELECT COALESCE(MAX(`seq`), 0) FROM `messages` WHERE `messages`.`project_id` = `projects`.`id`);--> statement-breakpoint
UPDATE `projects` SET `deployment_seq` = (SELECT COALESCE(MAX(`number`), 0) FROM `artifacts` WHERE `artifacts`.`project_id` = `projects`.`id` AND `artifacts`.`kind` = 'deployment');--> statement-breakpoint
UPDATE `projects` SET `workspace_version` = (SELECT COUNT(*) FROM `workflows` WHERE `workflows`.`project_id` = `projects`.`id` AND `workflows`.`status` = 'completed');
