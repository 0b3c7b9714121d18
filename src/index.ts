import { handleMoveBatch, MOVE_QUEUE_NAME } from "./account-moves/queue";
import { createApp } from "./app";
import { CAMPAIGN_QUEUE_NAME, handleCampaignBatch } from "./campaigns/materialise";
import { handleOutboundBatch } from "./delivery/consumer";
import { HOURLY_JOBS, runHousekeeping } from "./jobs/hourly";
import { handleOtpFailoverBatch, OTP_FAILOVER_QUEUE_NAME } from "./otp/failover";
import { handleWebhookBatch, isWebhookQueue } from "./webhooks/consumer";

export { ChatSession } from "./sessions/chat-session";

const app = createApp();

/**
 * The Worker: the HTTP API, the Queue consumers (outbound messages; webhook fan-out and
 * deliveries; campaign steps; one-time-code failover; accounts' moves between databases; routed by queue name), and hourly housekeeping
 * ({@link HOURLY_JOBS}: expired idempotency keys; events and delivery history past their 30 days;
 * number checks past their 7 days; reverse OTP guesses, the OTP send log and link tokens past
 * theirs (docs/retention.md, Data retention); the reconciliation sweep of
 * messages that lost their queue message; events whose webhook fan-out never happened; deliveries
 * whose retry message was lost; webhook secrets still in clear; campaigns whose next step or
 * completion was lost; incoming media past `MEDIA_RETENTION_DAYS`; stored copies of outgoing media
 * no message still needs), each job
 * isolated from the others' failures.
 */
export default {
  fetch: app.fetch,
  queue: (batch, env) => {
    if (isWebhookQueue(batch.queue)) return handleWebhookBatch(batch, env);
    if (batch.queue === CAMPAIGN_QUEUE_NAME) return handleCampaignBatch(batch, env);
    if (batch.queue === OTP_FAILOVER_QUEUE_NAME) return handleOtpFailoverBatch(batch, env);
    if (batch.queue === MOVE_QUEUE_NAME) return handleMoveBatch(batch, env);
    return handleOutboundBatch(batch, env);
  },
  scheduled: (_controller, env) => runHousekeeping(env, HOURLY_JOBS),
} satisfies ExportedHandler<Env>;
