-- A move into `sent` is counted in `account_usage` by the statement before its UPDATE, once per
-- hour and type of the batch (src/moves/counters.ts `sentUsageStatement`), not by the trigger once
-- per message: the trigger is made again as src/moves/counters.ts `statusTriggerSql` writes it now
-- (test/counters.test.ts holds the two equal). Written by hand (drizzle-kit --custom).
DROP TRIGGER `messages_usage_status`;--> statement-breakpoint
CREATE TRIGGER `messages_usage_status` AFTER UPDATE OF `status`, `refund_id` ON `messages`
WHEN NEW.direction = 'outgoing' AND (NEW.status IS NOT 'sent' OR OLD.status IS 'sent') AND (OLD.status IS NOT NEW.status OR OLD.refund_id IS NOT NEW.refund_id)
BEGIN
  UPDATE account_usage SET
    queued = queued - (OLD.status = 'queued') + (NEW.status = 'queued'),
    scheduled = scheduled - (OLD.status = 'scheduled') + (NEW.status = 'scheduled'),
    sent = sent - (OLD.status = 'sent') + (NEW.status = 'sent'),
    delivered = delivered - (OLD.status = 'delivered') + (NEW.status = 'delivered'),
    "read" = "read" - (OLD.status = 'read') + (NEW.status = 'read'),
    failed = failed - (OLD.status = 'failed') + (NEW.status = 'failed'),
    refunded = refunded + (CASE WHEN OLD.refund_id IS NULL AND NEW.refund_id IS NOT NULL THEN NEW.cost ELSE 0 END)
  WHERE account_id = NEW.account_id AND hour = NEW.created_at - NEW.created_at % 3600000 AND type = NEW.type;
END;
