CREATE TABLE `contact_identifiers` (
	`chatapp_session_id` text NOT NULL,
	`kind` text NOT NULL,
	`value` text NOT NULL,
	`contact_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`chatapp_session_id`, `kind`, `value`),
	FOREIGN KEY (`contact_id`) REFERENCES `contacts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `contact_identifiers_contact` ON `contact_identifiers` (`contact_id`);--> statement-breakpoint
CREATE TABLE `contacts` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`chatapp_session_id` text NOT NULL,
	`phone_number` text,
	`user_id` text,
	`parent_user_id` text,
	`username` text,
	`name` text,
	`first_message_at` integer,
	`last_message_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `contacts_account_created` ON `contacts` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contacts_account_session_created` ON `contacts` (`account_id`,`chatapp_session_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `messages` ADD `contact_id` text;--> statement-breakpoint
-- Contacts for the messages stored before contacts were kept: one per (session, number) that wrote in.
INSERT INTO `contacts` (`id`, `account_id`, `chatapp_session_id`, `phone_number`, `first_message_at`, `last_message_at`, `created_at`, `updated_at`)
SELECT 'ct_' || lower(hex(randomblob(16))), `account_id`, `chatapp_session_id`, `from_number`, min(`created_at`), max(`created_at`), min(`created_at`), max(`created_at`)
FROM `messages`
WHERE `direction` = 'incoming' AND `from_number` IS NOT NULL AND `chatapp_session_id` IS NOT NULL
GROUP BY `account_id`, `chatapp_session_id`, `from_number`;--> statement-breakpoint
INSERT INTO `contact_identifiers` (`chatapp_session_id`, `kind`, `value`, `contact_id`, `created_at`)
SELECT `chatapp_session_id`, 'phone_number', `phone_number`, `id`, `created_at` FROM `contacts`;--> statement-breakpoint
UPDATE `messages` SET `contact_id` = (
  SELECT `contact_id` FROM `contact_identifiers` `ci`
  WHERE `ci`.`chatapp_session_id` = `messages`.`chatapp_session_id` AND `ci`.`kind` = 'phone_number' AND `ci`.`value` = `messages`.`from_number`
) WHERE `direction` = 'incoming' AND `from_number` IS NOT NULL AND `chatapp_session_id` IS NOT NULL;
