DROP INDEX `sessions_account`;--> statement-breakpoint
CREATE INDEX `sessions_account` ON `sessions` (`account_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `max_sessions` integer DEFAULT 50 NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `max_draft_recipients` integer DEFAULT 1000000 NOT NULL;