CREATE TABLE `usage` (
	`id` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL,
	`turn_id` text NOT NULL,
	`session_id` text NOT NULL,
	`principal_id` text,
	`agent_id` text NOT NULL,
	`channel` text NOT NULL,
	`model` text NOT NULL,
	`input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`cache_read_input_tokens` integer NOT NULL,
	`cache_creation_input_tokens` integer NOT NULL,
	`context_tokens` integer NOT NULL,
	`cost_usd` real NOT NULL
);
--> statement-breakpoint
CREATE INDEX `usage_created_idx` ON `usage` (`created_at`);--> statement-breakpoint
CREATE INDEX `usage_principal_idx` ON `usage` (`principal_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `usage_agent_idx` ON `usage` (`agent_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `usage_turn_idx` ON `usage` (`turn_id`);