ALTER TABLE `tokens` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `tokens` ADD `last_used_at` integer;--> statement-breakpoint
ALTER TABLE `tokens` ADD `created_by` text;