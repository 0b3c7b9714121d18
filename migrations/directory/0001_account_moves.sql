-- Accounts' moves between account databases (src/db/directory-schema.ts `directoryMoves`; README,
-- Databases, Moving an account): the newest move of each account, with its phase and progress.
CREATE TABLE `directory_moves` (
	`account_id` text PRIMARY KEY NOT NULL,
	`from_database` text NOT NULL,
	`to_database` text NOT NULL,
	`phase` text NOT NULL,
	`step` integer NOT NULL,
	`cursor` text,
	`copied` integer NOT NULL,
	`deleted` integer NOT NULL,
	`error` text,
	`hold_until` integer NOT NULL,
	`switched_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
