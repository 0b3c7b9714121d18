-- Events stored small (src/db/schema/events.ts): keyed by their id's 16 bytes in a WITHOUT ROWID
-- table, so an id is found, and a message event recorded twice refused, with no index of its own;
-- the account by a new small `accounts.number`, the type by its EVENT_TYPE_CODES number (which
-- webhook deliveries now use too, in place of webhook_event_types); no index by time alone (the
-- hourly purge reads each account's events by `events_account_created`).
--
-- Hand-edited from drizzle-kit's output (it cannot express these): the events table WITHOUT ROWID
-- (https://www.sqlite.org/withoutrowid.html; test/events-storage.test.ts holds it); `number` added
-- with a default and set from the accounts' rowid before its unique index; the events copied over
-- converted; the deliveries' type codes moved to EVENT_TYPE_CODES before webhook_event_types goes.
-- The CASE lists below are EVENT_TYPE_CODES as it was when this was written.
ALTER TABLE `accounts` ADD `number` integer NOT NULL DEFAULT 0;--> statement-breakpoint
UPDATE `accounts` SET `number` = rowid;--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_number` ON `accounts` (`number`);--> statement-breakpoint
UPDATE `webhook_deliveries` SET `event_type_code` = COALESCE((SELECT CASE t.`name`
    WHEN 'message.sent' THEN 1
    WHEN 'message.delivered' THEN 2
    WHEN 'message.read' THEN 3
    WHEN 'message.failed' THEN 4
    WHEN 'message.received' THEN 5
    WHEN 'message.media_kept' THEN 6
    WHEN 'message.media_failed' THEN 7
    WHEN 'message.reaction' THEN 8
    WHEN 'session.status_changed' THEN 9
    WHEN 'session.qr_updated' THEN 10
    WHEN 'session.health_changed' THEN 11
    WHEN 'otp.verified' THEN 12
    WHEN 'otp.failed' THEN 13
    WHEN 'campaign.started' THEN 14
    WHEN 'campaign.completed' THEN 15
    WHEN 'campaign.cancelled' THEN 16
    WHEN 'account.balance_low' THEN 17
    WHEN 'template.status_changed' THEN 18
    WHEN 'contact.created' THEN 19
    WHEN 'contact.updated' THEN 20
    WHEN 'contact.erased' THEN 21
  END FROM `webhook_event_types` t WHERE t.`code` = `webhook_deliveries`.`event_type_code`), 0);--> statement-breakpoint
DROP TABLE `webhook_event_types`;--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_events` (
	`id` blob PRIMARY KEY NOT NULL,
	`account_number` integer NOT NULL,
	`type_code` integer NOT NULL,
	`dedupe_key` text,
	`snapshot` text NOT NULL,
	`object_id` text,
	`created_at` integer NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_events`("id", "account_number", "type_code", "dedupe_key", "snapshot", "object_id", "created_at")
SELECT unhex(substr(e.`id`, 5)), a.`number`, CASE e.`type`
    WHEN 'message.sent' THEN 1
    WHEN 'message.delivered' THEN 2
    WHEN 'message.read' THEN 3
    WHEN 'message.failed' THEN 4
    WHEN 'message.received' THEN 5
    WHEN 'message.media_kept' THEN 6
    WHEN 'message.media_failed' THEN 7
    WHEN 'message.reaction' THEN 8
    WHEN 'session.status_changed' THEN 9
    WHEN 'session.qr_updated' THEN 10
    WHEN 'session.health_changed' THEN 11
    WHEN 'otp.verified' THEN 12
    WHEN 'otp.failed' THEN 13
    WHEN 'campaign.started' THEN 14
    WHEN 'campaign.completed' THEN 15
    WHEN 'campaign.cancelled' THEN 16
    WHEN 'account.balance_low' THEN 17
    WHEN 'template.status_changed' THEN 18
    WHEN 'contact.created' THEN 19
    WHEN 'contact.updated' THEN 20
    WHEN 'contact.erased' THEN 21
  END, e.`dedupe_key`, e.`snapshot`, e.`object_id`, e.`created_at`
FROM `events` e JOIN `accounts` a ON a.`id` = e.`account_id`
WHERE unhex(substr(e.`id`, 5)) IS NOT NULL
  AND e.`type` IN ('message.sent', 'message.delivered', 'message.read', 'message.failed', 'message.received', 'message.media_kept', 'message.media_failed', 'message.reaction', 'session.status_changed', 'session.qr_updated', 'session.health_changed', 'otp.verified', 'otp.failed', 'campaign.started', 'campaign.completed', 'campaign.cancelled', 'account.balance_low', 'template.status_changed', 'contact.created', 'contact.updated', 'contact.erased');--> statement-breakpoint
DROP TABLE `events`;--> statement-breakpoint
ALTER TABLE `__new_events` RENAME TO `events`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `events_dedupe_key` ON `events` (`dedupe_key`) WHERE "events"."dedupe_key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `events_account_created` ON `events` (`account_number`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_account_type` ON `events` (`account_number`,`type_code`,`created_at`,`id`);
