import { createApp } from "./app";
import { CAMPAIGN_QUEUE_NAME, handleCampaignBatch, resumeStalledCampaigns } from "./campaigns/materialise";
import { createDb } from "./db/client";
import { purgeEvents } from "./db/queries/events";
import { purgeExpiredIdempotencyKeys } from "./db/queries/idempotency";
import { purgeDeliveryHistory } from "./db/queries/webhook-deliveries";
import { handleOutboundBatch } from "./delivery/consumer";
import { requeueStale } from "./delivery/reconcile";
import { EVENT_RETENTION_MS } from "./events/record";
import { republishUndelivered } from "./events/sweep";
import { completeFinishedCampaigns } from "./moves/campaign";
import { handleWebhookBatch, isWebhookQueue } from "./webhooks/consumer";
import { requeueOverdueDeliveries } from "./webhooks/sweep";

export { ChatSession } from "./sessions/chat-session";

const app = createApp();

/**
 * The Worker: the HTTP API, the Queue consumers (outbound messages; webhook fan-out and
 * deliveries, routed by queue name), and hourly housekeeping (expired idempotency keys; events
 * and delivery history past their 30 days; the reconciliation sweep of messages that lost their
 * queue message; events whose webhook fan-out never happened; deliveries whose retry message was
 * lost; campaigns whose next step or completion was lost).
 */
export default {
  fetch: app.fetch,
  queue: (batch, env) => {
    if (isWebhookQueue(batch.queue)) return handleWebhookBatch(batch, env);
    if (batch.queue === CAMPAIGN_QUEUE_NAME) return handleCampaignBatch(batch, env);
    return handleOutboundBatch(batch, env);
  },
  scheduled: async (_controller, env) => {
    const db = createDb(env.DB);
    await purgeExpiredIdempotencyKeys(db, Date.now());
    await purgeEvents(db, Date.now() - EVENT_RETENTION_MS);
    await purgeDeliveryHistory(db, Date.now() - EVENT_RETENTION_MS);
    await requeueStale(env, db, Date.now());
    await republishUndelivered(env, db, Date.now());
    await requeueOverdueDeliveries(env, db, Date.now());
    await resumeStalledCampaigns(env, db, Date.now());
    await completeFinishedCampaigns(env);
  },
} satisfies ExportedHandler<Env>;
