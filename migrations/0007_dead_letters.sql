ALTER TABLE `inbox` ADD `failed_at` integer;--> statement-breakpoint
ALTER TABLE `inbox` ADD `error` text;--> statement-breakpoint
ALTER TABLE `inbox` ADD `attempts` integer;--> statement-breakpoint
CREATE INDEX `inbox_failed_idx` ON `inbox` (`failed_at`);