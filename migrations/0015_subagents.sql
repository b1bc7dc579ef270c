CREATE TABLE `sidechains` (
	`session_id` text NOT NULL,
	`tool_use_id` text NOT NULL,
	`turn_id` text NOT NULL,
	`type` text NOT NULL,
	`description` text NOT NULL,
	`state` text NOT NULL,
	`messages` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `tool_use_id`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sidechains_turn_idx` ON `sidechains` (`turn_id`);