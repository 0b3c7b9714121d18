DROP INDEX `messages_account_from`;--> statement-breakpoint
DROP INDEX `messages_provider_id`;--> statement-breakpoint
DROP INDEX `messages_charge`;--> statement-breakpoint
CREATE INDEX `messages_account_from` ON `messages` (`account_id`,`from_number`,`created_at`,`id`) WHERE "messages"."from_number" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `messages_provider_id` ON `messages` (`provider_message_id`) WHERE "messages"."provider_message_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `messages_charge` ON `messages` (`charge_id`,`send_index`,`id`) WHERE "messages"."campaign_id" IS NOT NULL;--> statement-breakpoint
-- hand-written: usage counters (begin)
-- Kept by hand below drizzle-kit's statements: when this migration is generated again, append this
-- block again. A new outgoing message is no longer counted in `account_usage` by a trigger, one
-- counter write per message: the statement that inserts a send's messages is preceded, in its D1
-- batch, by one that counts them all (src/db/queries/messages.ts `insertOutgoingStatements`).
DROP TRIGGER `messages_usage_insert`;
-- hand-written: usage counters (end)
