-- The hourly retention purges of link tokens (by expiry) and of the OTP send log (by send time)
-- each delete a chunk of the oldest rows (src/db/queries/purge.ts): these indexes find them.
CREATE INDEX `link_tokens_expires` ON `link_tokens` (`expires_at`);--> statement-breakpoint
CREATE INDEX `otp_sends_sent` ON `otp_sends` (`sent_at`);