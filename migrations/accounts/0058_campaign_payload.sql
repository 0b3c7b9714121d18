-- A location, contacts or interactive campaign's object (src/db/schema/campaigns.ts `payload`):
-- what every message of it carries, under its type's key.
ALTER TABLE `campaigns` ADD `payload` text;
