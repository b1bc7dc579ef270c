CREATE TABLE `approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`turn_id` text NOT NULL,
	`tool_use_id` text NOT NULL,
	`session_id` text NOT NULL,
	`tool` text NOT NULL,
	`summary` text NOT NULL,
	`input` text NOT NULL,
	`requester_principal_id` text,
	`conversation` text NOT NULL,
	`status` text NOT NULL,
	`decided_by` text,
	`decided_at` integer,
	`always` integer DEFAULT 0 NOT NULL,
	`reason` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `approvals_tool_use_uq` ON `approvals` (`turn_id`,`tool_use_id`);--> statement-breakpoint
CREATE INDEX `approvals_status_idx` ON `approvals` (`status`);--> statement-breakpoint
CREATE TABLE `audit` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`actor` text NOT NULL,
	`action` text NOT NULL,
	`target` text,
	`detail` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_action_idx` ON `audit` (`action`,`id`);--> statement-breakpoint
CREATE INDEX `audit_actor_idx` ON `audit` (`actor`,`id`);--> statement-breakpoint
CREATE TABLE `rules` (
	`id` text PRIMARY KEY NOT NULL,
	`scope_kind` text NOT NULL,
	`scope_id` text,
	`behavior` text NOT NULL,
	`rule` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL
);
