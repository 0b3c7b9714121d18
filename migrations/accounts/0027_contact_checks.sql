CREATE TABLE `contact_checks` (
	`account_id` text NOT NULL,
	`number` text NOT NULL,
	`on_chatapp` integer NOT NULL,
	`checked_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `number`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `contact_checks_checked` ON `contact_checks` (`checked_at`);--> statement-breakpoint
ALTER TABLE `campaigns` ADD `check_numbers` integer DEFAULT false NOT NULL;