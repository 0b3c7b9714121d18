CREATE TABLE `opt_outs` (
	`account_id` text NOT NULL,
	`to_number` text NOT NULL,
	`source` text NOT NULL,
	`keyword` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `to_number`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `opt_outs_account_created` ON `opt_outs` (`account_id`,`created_at`,`to_number`);