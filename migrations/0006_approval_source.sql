ALTER TABLE `approvals` ADD `source` text DEFAULT 'safety' NOT NULL;--> statement-breakpoint
ALTER TABLE `approvals` ADD `always_rule` text;