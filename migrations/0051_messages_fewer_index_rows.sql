DROP INDEX `messages_account_from`;--> statement-breakpoint
DROP INDEX `messages_provider_id`;--> statement-breakpoint
DROP INDEX `messages_charge`;--> statement-breakpoint
CREATE INDEX `messages_account_from` ON `messages` (`account_id`,`from_number`,`created_at`,`id`) WHERE "messages"."from_number" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `messages_provider_id` ON `messages` (`provider_message_id`) WHERE "messages"."provider_message_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `messages_charge` ON `messages` (`charge_id`,`send_index`,`id`) WHERE "messages"."campaign_id" IS NOT NULL;