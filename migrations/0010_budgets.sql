CREATE TABLE `budget_overrides` (
	`scope` text NOT NULL,
	`scope_id` text NOT NULL,
	`spec` text NOT NULL,
	`updated_by` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`scope`, `scope_id`)
);
