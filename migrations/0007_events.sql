CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`dedupe_key` text NOT NULL,
	`snapshot` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_dedupe_key` ON `events` (`dedupe_key`);--> statement-breakpoint
CREATE INDEX `events_account_created` ON `events` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_account_type` ON `events` (`account_id`,`type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_created` ON `events` (`created_at`);