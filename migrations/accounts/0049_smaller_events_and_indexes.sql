-- Smaller events and message indexes. A message event's id is derived from its message's id and
-- type (src/db/queries/events.ts messageEventId), so it stores no dedupe key: `dedupe_key` becomes
-- nullable (drizzle-kit rebuilds the table) and its unique index partial. Events kept from before
-- keep their ids and dedupe keys. `messages_account_session` loses its leading `account_id` (a
-- session belongs to one account). Hand edit: the INSERT below rewrites the snapshots of message
-- events to the new MESSAGE_EVENT_FIELDS (drizzle-kit copied them as they were).
DROP INDEX `messages_account_session`;--> statement-breakpoint
CREATE INDEX `messages_session` ON `messages` (`chatapp_session_id`,`created_at`,`id`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_events` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`dedupe_key` text,
	`snapshot` text NOT NULL,
	`object_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
-- A message event's array goes from the old MESSAGE_EVENT_FIELDS (session, gateway id, from, media,
-- status, reason, cost, sent, delivered, read, metadata, updated) to the new ones (media, status,
-- reason, delivered and read as ms from the event's time, metadata): what it drops is the
-- message's own value, or the event's time (src/db/queries/events.ts MESSAGE_EVENT_FIELDS).
INSERT INTO `__new_events`("id", "account_id", "type", "dedupe_key", "snapshot", "object_id", "created_at") SELECT "id", "account_id", "type", "dedupe_key",
  CASE WHEN "object_id" IS NULL THEN "snapshot" ELSE json_array(json_extract("snapshot", '$[3]'), json_extract("snapshot", '$[4]'),
    json_extract("snapshot", '$[5]'), json_extract("snapshot", '$[8]') - "created_at", json_extract("snapshot", '$[9]') - "created_at",
    json(json_extract("snapshot", '$[10]'))) END,
  "object_id", "created_at" FROM `events`;--> statement-breakpoint
DROP TABLE `events`;--> statement-breakpoint
ALTER TABLE `__new_events` RENAME TO `events`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `events_dedupe_key` ON `events` (`dedupe_key`) WHERE "events"."dedupe_key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `events_account_created` ON `events` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_account_type` ON `events` (`account_id`,`type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_created` ON `events` (`created_at`);