-- Webhook history stored small (src/db/schema/events.ts): a delivery that succeeds at its first
-- attempt is one row holding that attempt (`first_*`); webhook_attempts keeps only the attempts
-- after the first. Rows name their endpoint by its new small `number` (which also gives their
-- account), their event id as 16 bytes, their type by a code of webhook_event_types, their status
-- as 0/1/2 and later times as ms after `created_at`. The deliveries table is keyed (and so
-- ordered) as the history lists it; the indexes left are the unique (endpoint, event) one and two
-- partial ones holding only the deliveries not `succeeded`.
--
-- Hand-edited from drizzle-kit's output (it cannot express these): both tables WITHOUT ROWID
-- (https://www.sqlite.org/withoutrowid.html; test/webhook-history-storage.test.ts holds it); the
-- endpoints' `number` added with a default and set from their rowid before its unique index; the
-- rows copied over converted, the first attempts folded into their deliveries. Deliveries of
-- endpoints deleted before (which no route could list) and attempts of purged deliveries are not
-- carried over.
CREATE TABLE `webhook_event_types` (
	`code` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_event_types_name_unique` ON `webhook_event_types` (`name`);--> statement-breakpoint
INSERT INTO `webhook_event_types` (`name`) SELECT DISTINCT `event_type` FROM `webhook_deliveries` ORDER BY 1;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `number` integer NOT NULL DEFAULT 0;--> statement-breakpoint
UPDATE `webhook_endpoints` SET `number` = rowid;--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_endpoints_number` ON `webhook_endpoints` (`number`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_webhook_deliveries` (
	`endpoint_number` integer NOT NULL,
	`created_at` integer NOT NULL,
	`event_id` blob NOT NULL,
	`event_type_code` integer NOT NULL,
	`status` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`updated_after_ms` integer NOT NULL,
	`first_attempt_after_ms` integer,
	`first_status_code` integer,
	`first_duration_ms` integer,
	`first_response_excerpt` text,
	`first_error` text,
	PRIMARY KEY(`endpoint_number`, `created_at`, `event_id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_webhook_deliveries`("endpoint_number", "created_at", "event_id", "event_type_code", "status", "attempts", "next_attempt_at", "updated_after_ms", "first_attempt_after_ms", "first_status_code", "first_duration_ms", "first_response_excerpt", "first_error")
  SELECT w.`number`, d.`created_at`, unhex(substr(d.`event_id`, 5)), t.`code`,
    CASE d.`status` WHEN 'pending' THEN 0 WHEN 'succeeded' THEN 1 ELSE 2 END,
    d.`attempts`, d.`next_attempt_at`, d.`updated_at` - d.`created_at`,
    a.`attempted_at` - d.`created_at`, a.`status_code`, a.`duration_ms`, a.`response_excerpt`, a.`error`
  FROM `webhook_deliveries` d
  JOIN `webhook_endpoints` w ON w.`id` = d.`endpoint_id`
  JOIN `webhook_event_types` t ON t.`name` = d.`event_type`
  LEFT JOIN `webhook_attempts` a ON a.`endpoint_id` = d.`endpoint_id` AND a.`event_id` = d.`event_id` AND a.`attempt` = 1
  WHERE length(d.`event_id`) = 36 AND unhex(substr(d.`event_id`, 5)) IS NOT NULL;--> statement-breakpoint
CREATE TABLE `__new_webhook_attempts` (
	`endpoint_number` integer NOT NULL,
	`event_id` blob NOT NULL,
	`attempt` integer NOT NULL,
	`attempted_at` integer NOT NULL,
	`status_code` integer,
	`duration_ms` integer NOT NULL,
	`response_excerpt` text,
	`error` text,
	PRIMARY KEY(`endpoint_number`, `event_id`, `attempt`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_webhook_attempts`("endpoint_number", "event_id", "attempt", "attempted_at", "status_code", "duration_ms", "response_excerpt", "error")
  SELECT w.`number`, unhex(substr(a.`event_id`, 5)), a.`attempt`, a.`attempted_at`, a.`status_code`, a.`duration_ms`, a.`response_excerpt`, a.`error`
  FROM `webhook_attempts` a
  JOIN `webhook_endpoints` w ON w.`id` = a.`endpoint_id`
  WHERE a.`attempt` > 1 AND length(a.`event_id`) = 36 AND unhex(substr(a.`event_id`, 5)) IS NOT NULL
    AND EXISTS (SELECT 1 FROM `webhook_deliveries` d WHERE d.`endpoint_id` = a.`endpoint_id` AND d.`event_id` = a.`event_id`);--> statement-breakpoint
DROP TABLE `webhook_attempts`;--> statement-breakpoint
ALTER TABLE `__new_webhook_attempts` RENAME TO `webhook_attempts`;--> statement-breakpoint
DROP TABLE `webhook_deliveries`;--> statement-breakpoint
ALTER TABLE `__new_webhook_deliveries` RENAME TO `webhook_deliveries`;--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_event` ON `webhook_deliveries` (`endpoint_number`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_pending` ON `webhook_deliveries` (`endpoint_number`,`created_at`,`event_id`) WHERE "webhook_deliveries"."status" = 0;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_failed` ON `webhook_deliveries` (`endpoint_number`,`created_at`,`event_id`) WHERE "webhook_deliveries"."status" = 2;--> statement-breakpoint
PRAGMA foreign_keys=ON;
