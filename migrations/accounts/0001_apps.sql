CREATE TABLE `apps` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`sender_id` text NOT NULL,
	`message_template` text NOT NULL,
	`code_size` integer DEFAULT 6 NOT NULL,
	`expiry_seconds` integer DEFAULT 600 NOT NULL,
	`chatapp_session_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `apps_account_live` ON `apps` (`account_id`,`deleted_at`,`created_at`,`id`);