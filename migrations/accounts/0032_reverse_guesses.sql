CREATE TABLE `reverse_guesses` (
	`session_id` text NOT NULL,
	`message_key` text NOT NULL,
	`code_lookup` text NOT NULL,
	`sender` text NOT NULL,
	`otp_id` text,
	`outcome` text NOT NULL,
	`at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `message_key`, `code_lookup`)
);
--> statement-breakpoint
CREATE INDEX `reverse_guesses_sender` ON `reverse_guesses` (`session_id`,`sender`,`at`);--> statement-breakpoint
CREATE INDEX `reverse_guesses_otp` ON `reverse_guesses` (`otp_id`);--> statement-breakpoint
CREATE INDEX `reverse_guesses_at` ON `reverse_guesses` (`at`);--> statement-breakpoint
CREATE INDEX `otps_session_live` ON `otps` (`session_id`,`status`,`expires_at`);