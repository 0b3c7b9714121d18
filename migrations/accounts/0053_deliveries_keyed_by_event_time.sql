-- A webhook delivery's `created_at` is its event's own time (src/db/schema/events.ts
-- `webhookDeliveries`), so it is found by endpoint and event through the event, and the unique
-- index on (endpoint, event) goes: a delivery that succeeds at its first attempt is one row written.
-- An attempt after the first keeps its delivery's `created_at`, to find it by key.
--
-- Hand-edited from drizzle-kit's output (which only adds the column and drops the index): the
-- deliveries made before take their event's time (their times after it moved to keep each instant),
-- and their later attempts the delivery's, while the old index still finds them. A delivery whose
-- event is gone keeps its time (its attempts too): the history lists it, nothing finds it by key.
ALTER TABLE `webhook_attempts` ADD `created_at` integer;--> statement-breakpoint
UPDATE `webhook_deliveries` SET `created_at` = e.`created_at`,
  `updated_after_ms` = `updated_after_ms` + `webhook_deliveries`.`created_at` - e.`created_at`,
  `first_attempt_after_ms` = `first_attempt_after_ms` + `webhook_deliveries`.`created_at` - e.`created_at`
FROM `events` e WHERE e.`id` = `webhook_deliveries`.`event_id` AND e.`created_at` <> `webhook_deliveries`.`created_at`;--> statement-breakpoint
UPDATE `webhook_attempts` SET `created_at` = (SELECT d.`created_at` FROM `webhook_deliveries` d
  WHERE d.`endpoint_number` = `webhook_attempts`.`endpoint_number` AND d.`event_id` = `webhook_attempts`.`event_id`);--> statement-breakpoint
DROP INDEX `webhook_deliveries_event`;
