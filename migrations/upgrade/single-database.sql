-- Run once, by hand, on a deployment made before the directory (README, Deploying, Upgrading): its
-- one database `DB` holds every account and now serves as the directory too, and as the first
-- account database (`DB_ACCOUNTS_0`, the same database_id in wrangler.toml). This fills the
-- directory from the accounts it holds, as src/db/open-account.ts and the routes' writers would
-- have: `npx wrangler d1 execute DB --remote --file migrations/upgrade/single-database.sql`.
-- Running it again adds nothing twice.
INSERT OR IGNORE INTO `directory_accounts` (`id`, `database`, `number`, `created_at`)
	SELECT `id`, 'DB_ACCOUNTS_0', `number`, `created_at` FROM `accounts`;
INSERT OR IGNORE INTO `directory_routes` (`kind`, `key`, `account_id`, `session_id`, `expires_at`)
	SELECT 'api_key', `key_hash`, `account_id`, NULL, NULL FROM `api_keys`;
INSERT OR IGNORE INTO `directory_routes` (`kind`, `key`, `account_id`, `session_id`, `expires_at`)
	SELECT 'api_key_id', `id`, `account_id`, NULL, NULL FROM `api_keys`;
INSERT OR IGNORE INTO `directory_routes` (`kind`, `key`, `account_id`, `session_id`, `expires_at`)
	SELECT 'session', `id`, `account_id`, `id`, NULL FROM `sessions`;
INSERT OR IGNORE INTO `directory_routes` (`kind`, `key`, `account_id`, `session_id`, `expires_at`)
	SELECT 'link_token', `token_hash`, `account_id`, `session_id`, `expires_at` + 604800000 FROM `link_tokens`;
INSERT OR IGNORE INTO `directory_routes` (`kind`, `key`, `account_id`, `session_id`, `expires_at`)
	SELECT 'phone_number_id', `phone_number_id`, `account_id`, `session_id`, NULL FROM `cloud_api_numbers`;
