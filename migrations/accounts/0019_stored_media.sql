ALTER TABLE `campaigns` ADD `media_key` text;--> statement-breakpoint
ALTER TABLE `campaigns` ADD `media_content_type` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `media_key` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `media_content_type` text;