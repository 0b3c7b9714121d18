DROP INDEX `messages_waiting`;--> statement-breakpoint
ALTER TABLE `messages` ADD `accepted_at` integer;--> statement-breakpoint
CREATE INDEX `messages_unaccepted` ON `messages` (`updated_at`) WHERE "messages"."status" IN ('queued', 'scheduled') AND "messages"."accepted_at" IS NULL;