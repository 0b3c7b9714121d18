-- Message archives (src/archives/archive.ts). `archived_messages` is a tombstone a message leaves
-- in D1 when archived: stored as its primary key's b-tree (WITHOUT ROWID, hand-edited: drizzle-kit
-- cannot express it; https://www.sqlite.org/withoutrowid.html), about 30 bytes a message.
CREATE TABLE `archived_messages` (
	`message_id` blob PRIMARY KEY NOT NULL,
	`archive_seq` integer NOT NULL,
	FOREIGN KEY (`archive_seq`) REFERENCES `message_archives`(`seq`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `message_archives` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`account_id` text NOT NULL,
	`day` text NOT NULL,
	`object_key` text NOT NULL,
	`message_count` integer NOT NULL,
	`bytes` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `message_archives_id_unique` ON `message_archives` (`id`);--> statement-breakpoint
CREATE INDEX `message_archives_account` ON `message_archives` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `message_archives_day` ON `message_archives` (`account_id`,`day`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `message_retention_days` integer;