ALTER TABLE `campaigns` ADD `simulate_typing` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `messages` ADD `simulate_typing` integer DEFAULT false NOT NULL;