CREATE TABLE `instruction_files` (
	`workspace` text NOT NULL,
	`path` text NOT NULL,
	`sha256` text NOT NULL,
	`approved_at` integer NOT NULL,
	PRIMARY KEY(`workspace`, `path`)
);
--> statement-breakpoint
CREATE TABLE `principal_profiles` (
	`principal_id` text PRIMARY KEY NOT NULL,
	`fields` text NOT NULL,
	`updated_by` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`principal_id`) REFERENCES `principals`(`id`) ON UPDATE no action ON DELETE cascade
);
