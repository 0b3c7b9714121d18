-- OTP archives (src/archives/otps.ts): an archive now has a `kind` (`messages`, `otps`); an
-- archived OTP leaves a tombstone (`archived_otps`) and adds itself to the OTP statistics of its
-- app's hour (`otp_stats_hours`, `otp_verify_times`). The three tables are stored as their primary
-- key's b-tree (WITHOUT ROWID, hand-edited: drizzle-kit cannot express it;
-- https://www.sqlite.org/withoutrowid.html).
CREATE TABLE `archived_otps` (
	`otp_id` blob PRIMARY KEY NOT NULL,
	`archive_seq` integer NOT NULL,
	FOREIGN KEY (`archive_seq`) REFERENCES `message_archives`(`seq`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `otp_stats_hours` (
	`app_id` text NOT NULL,
	`start` integer NOT NULL,
	`mode` text NOT NULL,
	`channel` text NOT NULL,
	`sent` integer NOT NULL,
	`delivered` integer NOT NULL,
	`verified` integer NOT NULL,
	`failed` integer NOT NULL,
	`expired` integer NOT NULL,
	PRIMARY KEY(`app_id`, `start`, `mode`, `channel`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `otp_verify_times` (
	`app_id` text NOT NULL,
	`start` integer NOT NULL,
	`seconds` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`app_id`, `start`, `seconds`)
) WITHOUT ROWID;
--> statement-breakpoint
ALTER TABLE `erasures` ADD `archived_otps` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `message_archives` ADD `kind` text DEFAULT 'messages' NOT NULL;