ALTER TABLE `api_keys` ADD `created_by` text;--> statement-breakpoint
CREATE INDEX `api_keys_created_by` ON `api_keys` (`created_by`);