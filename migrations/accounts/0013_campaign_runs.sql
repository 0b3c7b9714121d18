ALTER TABLE `campaign_recipients` ADD `replied_at` integer;--> statement-breakpoint
CREATE INDEX `campaign_recipients_message` ON `campaign_recipients` (`message_id`);--> statement-breakpoint
ALTER TABLE `campaigns` ADD `price` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `campaigns` ADD `charge_id` text;--> statement-breakpoint
ALTER TABLE `campaigns` ADD `materialised_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `campaigns_active` ON `campaigns` (`status`) WHERE "campaigns"."status" IN ('scheduled', 'running', 'paused');--> statement-breakpoint
CREATE INDEX `messages_campaign` ON `messages` (`campaign_id`,`status`);--> statement-breakpoint
-- A campaign's statistics follow its messages' status (src/messages/status.ts moves it): each move
-- takes one from the old status's counter and adds one to the new one's, and a refund adds the
-- message's cost to `refunded`, in the statement that makes the move. Exact by construction, and
-- no statement of its own on the fan-out path.
CREATE TRIGGER `messages_campaign_stats` AFTER UPDATE OF `status`, `refund_id` ON `messages`
WHEN NEW.campaign_id IS NOT NULL AND (OLD.status IS NOT NEW.status OR OLD.refund_id IS NOT NEW.refund_id)
BEGIN
  UPDATE campaigns SET
    queued = queued - (OLD.status IN ('queued', 'scheduled')) + (NEW.status IN ('queued', 'scheduled')),
    sent = sent - (OLD.status = 'sent') + (NEW.status = 'sent'),
    delivered = delivered - (OLD.status = 'delivered') + (NEW.status = 'delivered'),
    "read" = "read" - (OLD.status = 'read') + (NEW.status = 'read'),
    failed = failed - (OLD.status = 'failed') + (NEW.status = 'failed'),
    refunded = refunded + (CASE WHEN OLD.refund_id IS NULL AND NEW.refund_id IS NOT NULL THEN NEW.cost ELSE 0 END)
  WHERE id = NEW.campaign_id;
END;
--> statement-breakpoint
-- `replied` counts recipients who wrote back after their campaign message was sent, once each
-- (src/messages/receive.ts sets `replied_at` the first time).
CREATE TRIGGER `campaign_recipients_replied` AFTER UPDATE OF `replied_at` ON `campaign_recipients`
WHEN OLD.replied_at IS NULL AND NEW.replied_at IS NOT NULL
BEGIN
  UPDATE campaigns SET replied = replied + 1 WHERE id = NEW.campaign_id;
END;
