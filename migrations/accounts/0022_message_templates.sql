CREATE TABLE `message_template_syncs` (
	`session_id` text PRIMARY KEY NOT NULL,
	`synced_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `message_templates` (
	`session_id` text NOT NULL,
	`account_id` text NOT NULL,
	`waba_id` text NOT NULL,
	`template_id` text NOT NULL,
	`name` text NOT NULL,
	`language` text NOT NULL,
	`category` text NOT NULL,
	`status` text NOT NULL,
	`components` text DEFAULT '[]' NOT NULL,
	`reason` text,
	`synced_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `name`, `language`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `message_templates_waba_template` ON `message_templates` (`waba_id`,`template_id`);