ALTER TABLE `sessions` ADD `settings` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `turns` ADD `usage` text;