CREATE TABLE `contact_windows` (
	`session_id` text NOT NULL,
	`contact_number` text NOT NULL,
	`last_incoming_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `contact_number`),
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
