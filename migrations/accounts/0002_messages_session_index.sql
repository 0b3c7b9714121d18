DROP INDEX `messages_session_created`;--> statement-breakpoint
CREATE INDEX `messages_account_session` ON `messages` (`account_id`,`chatapp_session_id`,`created_at`,`id`);