-- Webhook signing secrets are sealed from now on (src/webhooks/secret.ts), so the prefix an endpoint
-- shows is kept apart. Endpoints made before hold their secret in clear: their prefix is its first
-- 14 characters (`whsec_` and 8), and the hourly sweep seals the secret itself.
ALTER TABLE `webhook_endpoints` ADD `secret_prefix` text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE `webhook_endpoints` SET `secret_prefix` = substr(`secret`, 1, 14);
