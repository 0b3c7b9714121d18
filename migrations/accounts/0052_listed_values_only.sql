DROP INDEX `events_account_type`;--> statement-breakpoint
CREATE INDEX `events_account_type` ON `events` (`account_number`,`type_code`,`created_at`,`id`) WHERE type_code NOT IN (1, 2, 3);--> statement-breakpoint
DROP INDEX `messages_account_status`;--> statement-breakpoint
DROP INDEX `messages_account_direction`;--> statement-breakpoint
DROP INDEX `messages_account_type`;--> statement-breakpoint
CREATE INDEX `messages_account_status` ON `messages` (`account_id`,`status`,`created_at`,`id`) WHERE status IN ('queued', 'scheduled', 'failed');--> statement-breakpoint
CREATE INDEX `messages_account_direction` ON `messages` (`account_id`,`direction`,`created_at`,`id`) WHERE direction = 'incoming';--> statement-breakpoint
CREATE INDEX `messages_account_type` ON `messages` (`account_id`,`type`,`created_at`,`id`) WHERE type <> 'text';