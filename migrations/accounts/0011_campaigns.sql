CREATE TABLE `campaign_recipients` (
	`campaign_id` text NOT NULL,
	`seq` integer NOT NULL,
	`to_number` text NOT NULL,
	`variables` text,
	`status` text NOT NULL,
	`reason` text,
	`message_id` text,
	PRIMARY KEY(`campaign_id`, `seq`),
	FOREIGN KEY (`campaign_id`) REFERENCES `campaigns`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `campaign_recipients_number` ON `campaign_recipients` (`campaign_id`,`to_number`);--> statement-breakpoint
CREATE TABLE `campaigns` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`status` text NOT NULL,
	`session_ids` text NOT NULL,
	`type` text NOT NULL,
	`content` text,
	`media_url` text,
	`delay_min_ms` integer NOT NULL,
	`delay_max_ms` integer NOT NULL,
	`scheduled_at` integer,
	`send_window` text,
	`total` integer DEFAULT 0 NOT NULL,
	`queued` integer DEFAULT 0 NOT NULL,
	`sent` integer DEFAULT 0 NOT NULL,
	`delivered` integer DEFAULT 0 NOT NULL,
	`read` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`replied` integer DEFAULT 0 NOT NULL,
	`skipped` integer DEFAULT 0 NOT NULL,
	`cost` integer DEFAULT 0 NOT NULL,
	`refunded` integer DEFAULT 0 NOT NULL,
	`started_at` integer,
	`completed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `campaigns_account` ON `campaigns` (`account_id`,`created_at`,`id`);