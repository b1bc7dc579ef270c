CREATE TABLE `deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`turn_id` text NOT NULL,
	`part` integer NOT NULL,
	`kind` text NOT NULL,
	`channel` text NOT NULL,
	`account` text NOT NULL,
	`conversation_id` text NOT NULL,
	`platform_message_id` text,
	`content` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deliveries_turn_part_kind_uq` ON `deliveries` (`turn_id`,`part`,`kind`);--> statement-breakpoint
CREATE INDEX `deliveries_conversation_idx` ON `deliveries` (`channel`,`account`,`conversation_id`,`id`);--> statement-breakpoint
CREATE TABLE `entries` (
	`session_id` text NOT NULL,
	`seq` integer NOT NULL,
	`turn_id` text,
	`kind` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `seq`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `entries_turn_idx` ON `entries` (`turn_id`);--> statement-breakpoint
CREATE TABLE `identities` (
	`id` text PRIMARY KEY NOT NULL,
	`principal_id` text NOT NULL,
	`channel_type` text NOT NULL,
	`external_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`principal_id`) REFERENCES `principals`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identities_channel_external_uq` ON `identities` (`channel_type`,`external_id`);--> statement-breakpoint
CREATE INDEX `identities_principal_idx` ON `identities` (`principal_id`);--> statement-breakpoint
CREATE TABLE `inbox` (
	`id` text PRIMARY KEY NOT NULL,
	`channel` text NOT NULL,
	`account` text NOT NULL,
	`dedupe_key` text NOT NULL,
	`payload` text NOT NULL,
	`received_at` integer NOT NULL,
	`turn_id` text,
	FOREIGN KEY (`turn_id`) REFERENCES `turns`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `inbox_dedupe_uq` ON `inbox` (`channel`,`account`,`dedupe_key`);--> statement-breakpoint
CREATE TABLE `principals` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`role` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `principals_name_uq` ON `principals` (`name`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`key` text NOT NULL,
	`agent_id` text NOT NULL,
	`channel` text NOT NULL,
	`account` text NOT NULL,
	`scope` text NOT NULL,
	`principal_id` text,
	`conversation` text,
	`thread` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`ended_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_live_key_uq` ON `sessions` (`key`) WHERE ended_at IS NULL;--> statement-breakpoint
CREATE INDEX `sessions_updated_idx` ON `sessions` (`updated_at`);--> statement-breakpoint
CREATE INDEX `sessions_principal_idx` ON `sessions` (`principal_id`);--> statement-breakpoint
CREATE TABLE `tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`secret_hash` text NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`principal_id` text,
	`scopes` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`principal_id`) REFERENCES `principals`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tokens_secret_hash_uq` ON `tokens` (`secret_hash`);--> statement-breakpoint
CREATE TABLE `turns` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`inbox_id` text NOT NULL,
	`state` text NOT NULL,
	`client_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`reason` text,
	`error` text,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`inbox_id`) REFERENCES `inbox`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `turns_state_idx` ON `turns` (`state`);--> statement-breakpoint
CREATE INDEX `turns_session_state_idx` ON `turns` (`session_id`,`state`);