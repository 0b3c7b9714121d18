DROP INDEX `webhook_deliveries_endpoint`;--> statement-breakpoint
-- SQLite adds a NOT NULL column only with a default; existing rows take their event's type below.
ALTER TABLE `webhook_deliveries` ADD `event_type` text NOT NULL DEFAULT '';--> statement-breakpoint
UPDATE `webhook_deliveries` SET `event_type` = coalesce((SELECT `type` FROM `events` WHERE `events`.`id` = `webhook_deliveries`.`event_id`), '');--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_created` ON `webhook_deliveries` (`endpoint_id`,`created_at`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint_status` ON `webhook_deliveries` (`endpoint_id`,`status`,`created_at`,`event_id`);
