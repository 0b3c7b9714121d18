DROP INDEX `messages_refund`;--> statement-breakpoint
DROP INDEX `messages_campaign`;--> statement-breakpoint
CREATE INDEX `messages_refund` ON `messages` (`refund_id`,`send_index`,`id`) WHERE "messages"."refund_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `messages_campaign` ON `messages` (`campaign_id`,`status`) WHERE "messages"."campaign_id" IS NOT NULL;