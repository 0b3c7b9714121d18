-- The directory (src/db/schema/directory.ts): where each account lives, and the keys the outside
-- world reaches an account by. Filled here from the rows already in this database, which become
-- the accounts of database `DB` (README, Databases).
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
INSERT INTO `directory_accounts` (`id`, `database`, `number`, `created_at`)
	SELECT `id`, 'DB', `number`, `created_at` FROM `accounts`;--> statement-breakpoint
INSERT INTO `directory_routes` (`kind`, `key`, `account_id`, `session_id`, `expires_at`)
	SELECT 'api_key', `key_hash`, `account_id`, NULL, NULL FROM `api_keys`;--> statement-breakpoint
INSERT INTO `directory_routes` (`kind`, `key`, `account_id`, `session_id`, `expires_at`)
	SELECT 'api_key_id', `id`, `account_id`, NULL, NULL FROM `api_keys`;--> statement-breakpoint
INSERT INTO `directory_routes` (`kind`, `key`, `account_id`, `session_id`, `expires_at`)
	SELECT 'session', `id`, `account_id`, `id`, NULL FROM `sessions`;--> statement-breakpoint
INSERT INTO `directory_routes` (`kind`, `key`, `account_id`, `session_id`, `expires_at`)
	SELECT 'link_token', `token_hash`, `account_id`, `session_id`, `expires_at` FROM `link_tokens`;--> statement-breakpoint
INSERT INTO `directory_routes` (`kind`, `key`, `account_id`, `session_id`, `expires_at`)
	SELECT 'phone_number_id', `phone_number_id`, `account_id`, `session_id`, NULL FROM `cloud_api_numbers`;
