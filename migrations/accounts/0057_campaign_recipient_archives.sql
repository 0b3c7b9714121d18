-- Archives of campaign recipients (src/archives/campaign-recipients.ts): an archive of kind
-- `campaign_recipients` names its campaign; an erasure counts the archived recipients it erased.
ALTER TABLE `erasures` ADD `archived_campaign_recipients` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `message_archives` ADD `campaign_id` text;--> statement-breakpoint
CREATE INDEX `message_archives_campaign` ON `message_archives` (`campaign_id`) WHERE "message_archives"."campaign_id" IS NOT NULL;