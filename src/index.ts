import { createApp } from "./app";

export { ChatSession } from "./sessions/chat-session";

const app = createApp();

/** The Worker: the HTTP API. The outbound-queue consumer and housekeeping join in issue 3. */
export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
