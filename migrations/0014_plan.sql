ALTER TABLE `approvals` ADD `choices` text;--> statement-breakpoint
ALTER TABLE `approvals` ADD `choice` text;