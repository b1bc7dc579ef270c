CREATE TABLE `offer_switches` (
	`tool` text NOT NULL,
	`scope_kind` text NOT NULL,
	`scope_id` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`tool`, `scope_kind`, `scope_id`)
);
