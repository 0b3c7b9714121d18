CREATE TABLE `otp_sends` (
	`otp_id` text NOT NULL,
	`seq` integer NOT NULL,
	`app_id` text NOT NULL,
	`to_number` text NOT NULL,
	`sent_at` integer NOT NULL,
	PRIMARY KEY(`otp_id`, `seq`),
	FOREIGN KEY (`otp_id`) REFERENCES `otps`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `otp_sends_app_number` ON `otp_sends` (`app_id`,`to_number`,`sent_at`);--> statement-breakpoint
CREATE TABLE `otps` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`app_id` text NOT NULL,
	`message_id` text,
	`to_number` text NOT NULL,
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
CREATE INDEX `otps_account` ON `otps` (`account_id`,`created_at`);