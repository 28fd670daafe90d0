CREATE INDEX `artifacts_project_number_idx` ON `artifacts` (`project_id`,`kind`,`number`);--> statement-breakpoint
-- One number per deploy: the deployments one workflow published (web, ios, android) share a
-- number. Deployments numbered before were numbered across platforms (web #4, ios #5, android #6);
-- they are renumbered here, each project's deploys 1, 2, ... in the order they were first published.
UPDATE `artifacts` SET `number` = (
	SELECT `d`.`n` FROM (
		SELECT `g`.`project_id`, `g`.`deploy_key`, DENSE_RANK() OVER (PARTITION BY `g`.`project_id` ORDER BY `g`.`first_number`, `g`.`deploy_key`) AS `n`
		FROM (
			SELECT `project_id`, COALESCE(`workflow_id`, `id`) AS `deploy_key`, MIN(`number`) AS `first_number`
			FROM `artifacts` WHERE `kind` = 'deployment' GROUP BY `project_id`, COALESCE(`workflow_id`, `id`)
		) AS `g`
	) AS `d`
	WHERE `d`.`project_id` = `artifacts`.`project_id` AND `d`.`deploy_key` = COALESCE(`artifacts`.`workflow_id`, `artifacts`.`id`)
) WHERE `kind` = 'deployment';
