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
ALTER TABLE `apps` ADD `channels` text;--> statement-breakpoint
ALTER TABLE `apps` ADD `failover_after_seconds` integer DEFAULT 15 NOT NULL;--> statement-breakpoint
ALTER TABLE `apps` ADD `reverse_price` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `otps` ADD `mode` text DEFAULT 'send' NOT NULL;--> statement-breakpoint
ALTER TABLE `otps` ADD `session_id` text;--> statement-breakpoint
ALTER TABLE `otps` ADD `code_lookup` text;--> statement-breakpoint
ALTER TABLE `otps` ADD `verified_number` text;--> statement-breakpoint
CREATE INDEX `otps_app` ON `otps` (`app_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `otps_code_lookup` ON `otps` (`session_id`,`code_lookup`);--> statement-breakpoint
UPDATE `apps` SET `channels` = json_array(`chatapp_session_id`) WHERE `chatapp_session_id` IS NOT NULL;--> statement-breakpoint
INSERT INTO `otp_attempts` (`otp_id`, `seq`, `send_seq`, `session_id`, `message_id`, `created_at`)
  SELECT o.`id`, 1, o.`sends`, m.`chatapp_session_id`, o.`message_id`, o.`last_sent_at`
  FROM `otps` o JOIN `messages` m ON m.`id` = o.`message_id`;
