CREATE TABLE `erasures` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`address` text NOT NULL,
	`status` text NOT NULL,
	`sealed_addresses` text,
	`messages` integer DEFAULT 0 NOT NULL,
	`media_objects` integer DEFAULT 0 NOT NULL,
	`otps` integer DEFAULT 0 NOT NULL,
	`campaign_recipients` integer DEFAULT 0 NOT NULL,
	`contacts` integer DEFAULT 0 NOT NULL,
	`opt_outs` integer DEFAULT 0 NOT NULL,
	`events` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`completed_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `erasures_account_created` ON `erasures` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `erasures_pending` ON `erasures` (`created_at`) WHERE "erasures"."status" = 'pending';