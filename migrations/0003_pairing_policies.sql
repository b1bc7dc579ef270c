CREATE TABLE `pairing_requests` (
	`code` text PRIMARY KEY NOT NULL,
	`channel` text NOT NULL,
	`account` text NOT NULL,
	`identity` text NOT NULL,
	`display_name` text,
	`conversation` text NOT NULL,
	`held` text NOT NULL,
	`status` text NOT NULL,
	`principal_id` text,
	`decided_by` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pairing_pending_identity_uq` ON `pairing_requests` (`channel`,`account`,`identity`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `pairing_status_idx` ON `pairing_requests` (`status`,`expires_at`);--> statement-breakpoint
CREATE TABLE `policy_overrides` (
	`channel_id` text NOT NULL,
	`field` text NOT NULL,
	`value` text NOT NULL,
	`updated_by` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`channel_id`, `field`)
);
