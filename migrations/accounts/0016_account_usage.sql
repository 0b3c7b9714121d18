CREATE TABLE `account_usage` (
	`account_id` text NOT NULL,
	`hour` integer NOT NULL,
	`type` text NOT NULL,
	`queued` integer DEFAULT 0 NOT NULL,
	`scheduled` integer DEFAULT 0 NOT NULL,
	`sent` integer DEFAULT 0 NOT NULL,
	`delivered` integer DEFAULT 0 NOT NULL,
	`read` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`cost` integer DEFAULT 0 NOT NULL,
	`refunded` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`account_id`, `hour`, `type`)
);
--> statement-breakpoint
DROP INDEX `ledger_entries_account`;--> statement-breakpoint
ALTER TABLE `ledger_entries` ADD `campaign_id` text;--> statement-breakpoint
ALTER TABLE `ledger_entries` ADD `otp_id` text;--> statement-breakpoint
ALTER TABLE `ledger_entries` ADD `description` text;--> statement-breakpoint
CREATE INDEX `ledger_entries_account_kind` ON `ledger_entries` (`account_id`,`kind`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `ledger_entries_account` ON `ledger_entries` (`account_id`,`created_at`,`id`);--> statement-breakpoint
DROP INDEX `messages_refund`;--> statement-breakpoint
CREATE INDEX `messages_charge` ON `messages` (`charge_id`,`send_index`,`id`);--> statement-breakpoint
CREATE INDEX `messages_refund` ON `messages` (`refund_id`,`send_index`,`id`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `low_balance_threshold` integer;--> statement-breakpoint
-- hand-written: usage counters (begin)
-- Kept by hand below drizzle-kit's statements: when this migration is generated again, append this
-- block again. `account_usage` counts each outgoing message in the UTC hour it was created (its
-- `created_at`, floored to the hour) under its type: one in the counter of its status, its cost,
-- and its cost again in `refunded` once a refund tags it. Incoming messages are not counted.
-- The triggers run inside the statement that inserts a message or moves its status
-- (src/messages/status.ts), so the counters are exact by construction and the fan-out runs no
-- statement of its own for them (as `messages_campaign_stats`, migrations/0013).
INSERT INTO `account_usage` (`account_id`, `hour`, `type`, `queued`, `scheduled`, `sent`, `delivered`, `read`, `failed`, `cost`, `refunded`)
SELECT account_id, created_at - created_at % 3600000, type,
  SUM(status = 'queued'), SUM(status = 'scheduled'), SUM(status = 'sent'), SUM(status = 'delivered'),
  SUM(status = 'read'), SUM(status = 'failed'), SUM(cost), SUM(CASE WHEN refund_id IS NULL THEN 0 ELSE cost END)
FROM messages WHERE direction = 'outgoing'
GROUP BY account_id, created_at - created_at % 3600000, type;
--> statement-breakpoint
CREATE TRIGGER `messages_usage_insert` AFTER INSERT ON `messages`
WHEN NEW.direction = 'outgoing'
BEGIN
  INSERT INTO account_usage (account_id, hour, type, queued, scheduled, sent, delivered, "read", failed, cost, refunded)
  VALUES (NEW.account_id, NEW.created_at - NEW.created_at % 3600000, NEW.type,
    NEW.status = 'queued', NEW.status = 'scheduled', NEW.status = 'sent', NEW.status = 'delivered',
    NEW.status = 'read', NEW.status = 'failed', NEW.cost, CASE WHEN NEW.refund_id IS NULL THEN 0 ELSE NEW.cost END)
  ON CONFLICT (account_id, hour, type) DO UPDATE SET
    queued = queued + excluded.queued,
    scheduled = scheduled + excluded.scheduled,
    sent = sent + excluded.sent,
    delivered = delivered + excluded.delivered,
    "read" = "read" + excluded."read",
    failed = failed + excluded.failed,
    cost = cost + excluded.cost,
    refunded = refunded + excluded.refunded;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_usage_status` AFTER UPDATE OF `status`, `refund_id` ON `messages`
WHEN NEW.direction = 'outgoing' AND (OLD.status IS NOT NEW.status OR OLD.refund_id IS NOT NEW.refund_id)
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
--> statement-breakpoint
-- The causes of the ledger entries made before the entries recorded them: a campaign's charge
-- (its `charge_id`), and the OTP or campaign of the messages a charge or refund covers when they
-- are all of one; the credit made with an account is its opening balance.
UPDATE ledger_entries SET campaign_id = (SELECT c.id FROM campaigns c WHERE c.charge_id = ledger_entries.id)
WHERE kind = 'charge' AND EXISTS (SELECT 1 FROM campaigns c WHERE c.charge_id = ledger_entries.id);
--> statement-breakpoint
UPDATE ledger_entries SET
  campaign_id = COALESCE(campaign_id, CASE kind
    WHEN 'charge' THEN (SELECT CASE WHEN COUNT(DISTINCT m.campaign_id) = 1 AND COUNT(m.campaign_id) = COUNT(*) THEN MIN(m.campaign_id) END
      FROM messages m WHERE m.charge_id = ledger_entries.id)
    ELSE (SELECT CASE WHEN COUNT(DISTINCT m.campaign_id) = 1 AND COUNT(m.campaign_id) = COUNT(*) THEN MIN(m.campaign_id) END
      FROM messages m WHERE m.refund_id = ledger_entries.id) END),
  otp_id = CASE kind
    WHEN 'charge' THEN (SELECT CASE WHEN COUNT(DISTINCT m.otp_id) = 1 AND COUNT(m.otp_id) = COUNT(*) THEN MIN(m.otp_id) END
      FROM messages m WHERE m.charge_id = ledger_entries.id)
    ELSE (SELECT CASE WHEN COUNT(DISTINCT m.otp_id) = 1 AND COUNT(m.otp_id) = COUNT(*) THEN MIN(m.otp_id) END
      FROM messages m WHERE m.refund_id = ledger_entries.id) END
WHERE kind IN ('charge', 'refund');
--> statement-breakpoint
UPDATE ledger_entries SET description = 'Opening balance'
WHERE kind = 'credit' AND created_at = (SELECT a.created_at FROM accounts a WHERE a.id = ledger_entries.account_id);
-- hand-written: usage counters (end)
