CREATE TABLE `pairing_held` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`code` text NOT NULL,
	`dedupe_key` text NOT NULL,
	`message` text NOT NULL,
	`bytes` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`code`) REFERENCES `pairing_requests`(`code`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pairing_held_code_dedupe_uq` ON `pairing_held` (`code`,`dedupe_key`);--> statement-breakpoint
ALTER TABLE `pairing_requests` ADD `overflow_notified` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Held messages stored as a JSON array before this migration become rows, in their order.
INSERT OR IGNORE INTO `pairing_held` (`code`, `dedupe_key`, `message`, `bytes`, `created_at`)
SELECT p.`code`, coalesce(json_extract(j.value, '$.dedupeKey'), 'migrated-' || j.key), j.value, length(CAST(j.value AS BLOB)), p.`created_at`
FROM `pairing_requests` p, json_each(CASE WHEN json_valid(p.`held`) THEN p.`held` ELSE '[]' END) j
WHERE j.type = 'object'
ORDER BY p.`created_at`, p.`code`, j.key;
