CREATE INDEX `pairing_identity_idx` ON `pairing_requests` (`channel`,`account`,`identity`,`created_at`);--> statement-breakpoint
ALTER TABLE `pairing_requests` DROP COLUMN `held`;