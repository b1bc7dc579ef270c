CREATE TABLE `memories` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`scope` text NOT NULL,
	`principal_id` text,
	`agent_id` text,
	`text` text NOT NULL,
	`tags` text NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `memories_id_uq` ON `memories` (`id`);--> statement-breakpoint
CREATE INDEX `memories_principal_idx` ON `memories` (`principal_id`);--> statement-breakpoint
CREATE INDEX `memories_agent_idx` ON `memories` (`agent_id`);--> statement-breakpoint
-- Not in schema.ts (drizzle has no virtual tables): the FTS5 index over memories, kept in step by triggers.
CREATE VIRTUAL TABLE `memories_fts` USING fts5(`text`, `tags`, content='memories', content_rowid='seq', tokenize='unicode61 remove_diacritics 2');--> statement-breakpoint
CREATE TRIGGER `memories_fts_ai` AFTER INSERT ON `memories` BEGIN
  INSERT INTO `memories_fts` (rowid, `text`, `tags`) VALUES (new.`seq`, new.`text`, new.`tags`);
END;--> statement-breakpoint
CREATE TRIGGER `memories_fts_ad` AFTER DELETE ON `memories` BEGIN
  INSERT INTO `memories_fts` (`memories_fts`, rowid, `text`, `tags`) VALUES ('delete', old.`seq`, old.`text`, old.`tags`);
END;--> statement-breakpoint
CREATE TRIGGER `memories_fts_au` AFTER UPDATE ON `memories` BEGIN
  INSERT INTO `memories_fts` (`memories_fts`, rowid, `text`, `tags`) VALUES ('delete', old.`seq`, old.`text`, old.`tags`);
  INSERT INTO `memories_fts` (rowid, `text`, `tags`) VALUES (new.`seq`, new.`text`, new.`tags`);
END;
