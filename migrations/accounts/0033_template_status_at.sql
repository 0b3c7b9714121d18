ALTER TABLE `message_templates` ADD `status_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- A cached row's status is as old as its last read from Meta (src/db/schema/templates.ts).
UPDATE `message_templates` SET `status_at` = `synced_at`;