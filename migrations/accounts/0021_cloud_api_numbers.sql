CREATE TABLE `cloud_api_numbers` (
	`session_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`phone_number_id` text NOT NULL,
	`waba_id` text NOT NULL,
	`access_token_sealed` text NOT NULL,
	`throughput_mps` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `cloud_api_numbers_phone_number_id` ON `cloud_api_numbers` (`phone_number_id`);--> statement-breakpoint
CREATE INDEX `cloud_api_numbers_waba` ON `cloud_api_numbers` (`waba_id`);