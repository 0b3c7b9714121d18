-- Webhook history keyed by what it is: an attempt by its delivery and number (no random id, and
-- no second index repeating the key), and both tables stored as their primary key's b-tree
-- (WITHOUT ROWID, https://www.sqlite.org/withoutrowid.html), so no index sits beside the table to
-- hold the key again. drizzle-kit cannot express WITHOUT ROWID: a later migration that rebuilds
-- either table must keep it (test/webhook-history-storage.test.ts holds it).
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_webhook_attempts` (
	`endpoint_id` text NOT NULL,
	`event_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`attempted_at` integer NOT NULL,
	`status_code` integer,
	`duration_ms` integer NOT NULL,
	`response_excerpt` text,
	`error` text,
	PRIMARY KEY(`endpoint_id`, `event_id`, `attempt`)
) WITHOUT ROWID;
--> statement-breakpoint
-- An attempt recorded twice before (its random id let it) is kept once.
INSERT OR IGNORE INTO `__new_webhook_attempts`("endpoint_id", "event_id", "attempt", "attempted_at", "status_code", "duration_ms", "response_excerpt", "error") SELECT "endpoint_id", "event_id", "attempt", "attempted_at", "status_code", "duration_ms", "response_excerpt", "error" FROM `webhook_attempts` ORDER BY "attempted_at";--> statement-breakpoint
DROP TABLE `webhook_attempts`;--> statement-breakpoint
ALTER TABLE `__new_webhook_attempts` RENAME TO `webhook_attempts`;--> statement-breakpoint
CREATE INDEX `webhook_attempts_time` ON `webhook_attempts` (`attempted_at`);--> statement-breakpoint
CREATE TABLE `__new_webhook_deliveries` (
	`endpoint_id` text NOT NULL,
	`event_id` text NOT NULL,
	`account_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`last_status_code` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`event_type` text NOT NULL DEFAULT '',
	PRIMARY KEY(`endpoint_id`, `event_id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_webhook_deliveries`("endpoint_id", "event_id", "account_id", "status", "attempts", "next_attempt_at", "last_status_code", "created_at", "updated_at", "event_type") SELECT "endpoint_id", "event_id", "account_id", "status", "attempts", "next_attempt_at", "last_status_code", "created_at", "updated_at", "event_type" FROM `webhook_deliveries`;--> statement-breakpoint
DROP TABLE `webhook_deliveries`;--> statement-breakpoint
ALTER TABLE `__new_webhook_deliveries` RENAME TO `webhook_deliveries`;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_created` ON `webhook_deliveries` (`endpoint_id`,`created_at`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_status` ON `webhook_deliveries` (`endpoint_id`,`status`,`created_at`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_pending` ON `webhook_deliveries` (`next_attempt_at`) WHERE "webhook_deliveries"."status" = 'pending';--> statement-breakpoint
PRAGMA foreign_keys=ON;
