import { createApp } from "./app";
import { createDb } from "./db/client";
import { purgeExpiredIdempotencyKeys } from "./db/queries/idempotency";
import { handleOutboundBatch } from "./delivery/consumer";

export { ChatSession } from "./sessions/chat-session";

const app = createApp();

/** The Worker: the HTTP API, the outbound Queue consumer, and hourly housekeeping. */
export default {
  fetch: app.fetch,
  queue: (batch, env) => handleOutboundBatch(batch, env),
  scheduled: async (_controller, env) => {
    await purgeExpiredIdempotencyKeys(createDb(env.DB), Date.now());
  },
} satisfies ExportedHandler<Env>;
