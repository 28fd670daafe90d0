ALTER TABLE `questions` ADD `kind` text DEFAULT 'text' NOT NULL;--> statement-breakpoint
ALTER TABLE `questions` ADD `format` text;--> statement-breakpoint
ALTER TABLE `questions` ADD `max_length` integer;--> statement-breakpoint
ALTER TABLE `questions` ADD `rules` text;