CREATE TABLE `otp_attempts` (
	`otp_id` text NOT NULL,
	`seq` integer NOT NULL,
	`send_seq` integer NOT NULL,
	`session_id` text NOT NULL,
	`message_id` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`otp_id`, `seq`),
	FOREIGN KEY (`otp_id`) REFERENCES `otps`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `otp_attempts_channel` ON `otp_attempts` (`otp_id`,`send_seq`,`session_id`);--> statement-breakpoint
PRAGMA defer_foreign_keys = on;--> statement-breakpoint
CREATE TABLE `__new_otps` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`app_id` text NOT NULL,
	`message_id` text,
	`mode` text DEFAULT 'send' NOT NULL,
	`session_id` text,
	`code_lookup` text,
	`verified_number` text,
	`to_number` text,
	`code_hmac` text NOT NULL,
	`status` text NOT NULL,
	`failed_attempts` integer DEFAULT 0 NOT NULL,
	`sends` integer DEFAULT 1 NOT NULL,
	`last_sent_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`verified_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_otps`("id", "account_id", "app_id", "message_id", "to_number", "code_hmac", "status", "failed_attempts", "sends", "last_sent_at", "expires_at", "verified_at", "created_at", "updated_at") SELECT "id", "account_id", "app_id", "message_id", "to_number", "code_hmac", "status", "failed_attempts", "sends", "last_sent_at", "expires_at", "verified_at", "created_at", "updated_at" FROM `otps`;--> statement-breakpoint
DROP TABLE `otps`;--> statement-breakpoint
ALTER TABLE `__new_otps` RENAME TO `otps`;--> statement-breakpoint
PRAGMA defer_foreign_keys = off;--> statement-breakpoint
CREATE INDEX `otps_account` ON `otps` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `otps_app` ON `otps` (`app_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `otps_code_lookup` ON `otps` (`session_id`,`code_lookup`);--> statement-breakpoint
ALTER TABLE `apps` ADD `channels` text;--> statement-breakpoint
ALTER TABLE `apps` ADD `failover_after_seconds` integer DEFAULT 15 NOT NULL;--> statement-breakpoint
ALTER TABLE `apps` ADD `reverse_price` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE `apps` SET `channels` = json_array(`chatapp_session_id`) WHERE `chatapp_session_id` IS NOT NULL;--> statement-breakpoint
INSERT INTO `otp_attempts` (`otp_id`, `seq`, `send_seq`, `session_id`, `message_id`, `created_at`)
  SELECT o.`id`, 1, o.`sends`, m.`chatapp_session_id`, o.`message_id`, o.`last_sent_at`
  FROM `otps` o JOIN `messages` m ON m.`id` = o.`message_id`;
