-- The directory (src/db/directory-schema.ts), in the `DB` binding: where each account lives, the
-- keys the outside world reaches an account by, and the admin API's Idempotency-Keys. Every other
-- table is in the account databases (migrations/accounts/; README, Databases). `IF NOT EXISTS`:
-- a database made before the directory holds `idempotency_keys` already, and becomes the
-- directory as well as the first account database (README, Deploying, Upgrading).
CREATE TABLE `directory_accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`database` text NOT NULL,
	`number` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `directory_accounts_number` ON `directory_accounts` (`number`);--> statement-breakpoint
CREATE TABLE `directory_routes` (
	`kind` text NOT NULL,
	`key` text NOT NULL,
	`account_id` text NOT NULL,
	`session_id` text,
	`expires_at` integer,
	PRIMARY KEY(`kind`, `key`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `directory_routes_expires` ON `directory_routes` (`expires_at`) WHERE "directory_routes"."expires_at" IS NOT NULL;--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `idempotency_keys` (
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
CREATE INDEX IF NOT EXISTS `idempotency_keys_expires` ON `idempotency_keys` (`expires_at`);