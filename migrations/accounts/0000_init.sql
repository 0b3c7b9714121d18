CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`balance` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	CONSTRAINT "accounts_balance_non_negative" CHECK("accounts"."balance" >= 0)
);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`name` text,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_account` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`status` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_expires` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
CREATE TABLE `ledger_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`amount` integer NOT NULL,
	`balance_after` integer NOT NULL,
	`message_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `ledger_entries_account` ON `ledger_entries` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`chatapp_session_id` text,
	`campaign_id` text,
	`otp_id` text,
	`provider_message_id` text,
	`from_number` text,
	`to_number` text NOT NULL,
	`type` text NOT NULL,
	`content` text,
	`media_url` text,
	`status` text NOT NULL,
	`direction` text NOT NULL,
	`reason` text,
	`cost` integer DEFAULT 0 NOT NULL,
	`delay_between` integer DEFAULT 0 NOT NULL,
	`send_index` integer DEFAULT 0 NOT NULL,
	`scheduled_at` integer,
	`sent_at` integer,
	`delivered_at` integer,
	`read_at` integer,
	`metadata` text DEFAULT '{}' NOT NULL,
	`charge_id` text,
	`refund_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `messages_account_created` ON `messages` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `messages_account_status` ON `messages` (`account_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `messages_account_direction` ON `messages` (`account_id`,`direction`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `messages_account_type` ON `messages` (`account_id`,`type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `messages_account_to` ON `messages` (`account_id`,`to_number`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `messages_account_from` ON `messages` (`account_id`,`from_number`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `messages_session_created` ON `messages` (`chatapp_session_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `messages_provider_id` ON `messages` (`provider_message_id`);--> statement-breakpoint
CREATE INDEX `messages_refund` ON `messages` (`refund_id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`session_id` text NOT NULL,
	`phone_number` text,
	`display_name` text NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`last_seen_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_session_id` ON `sessions` (`session_id`);--> statement-breakpoint
CREATE INDEX `sessions_account` ON `sessions` (`account_id`,`created_at`);