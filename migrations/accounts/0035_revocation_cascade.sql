ALTER TABLE `link_tokens` ADD `created_by` text;--> statement-breakpoint
CREATE INDEX `link_tokens_created_by` ON `link_tokens` (`created_by`);--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `webhook_endpoints` ADD `url_set_by` text;