import { describe, expect, it } from "vitest";
import { call, createAccount } from "../helpers";
import { firstAttempts, getMessage, type SendResponse } from "../message-fixtures";
import { alarmAt, openWindow, outboxEntry, useExampleNumber } from "./sessions-fixtures";
import { linkNumber } from "./webhooks-fixtures";

// A Cloud API send whose answer was lost (a timeout, a 5xx) may or may not have reached Meta,
// which has no way to look a message up: it stays unknown, settled by a status webhook carrying
// our id in `biz_opaque_callback_data`; with none by CLOUD_API_SETTLE_SECONDS (900 s here, the
// default) after the first call, it is sent again, with the same `biz_opaque_callback_data`.
// Time is the session's alarm's (sessions-fixtures.ts `alarmAt`), never waited for.

const SETTLE_MS = 900_000;

const meta = useExampleNumber();

describe("a send whose outcome is unknown", () => {
  it.each([
    ["no answer within the timeout", () => meta.graph.hangNext(), /^gateway_timeout/],
    [
      "Meta's 500 (131000, something went wrong)",
      () => meta.graph.failNext({ code: 131000, status: 500, message: "Something went wrong" }),
      /^gateway_http_500/,
    ],
  ])(
    "%s: not sent again before CLOUD_API_SETTLE_SECONDS; after it, sent again with the same callback data",
    async (_, fault, reason) => {
      const { key } = await createAccount();
      const session = await linkNumber(key, meta.number);
      await openWindow(meta.graph, meta.number.phoneNumberId, ["+14155552671"]);
      fault();
      const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
        key,
        body: { chatapp_session_id: session, to_number: ["+14155552671"], type: "text", content: "Hello" },
      });
      expect(res.status, res.text).toBe(201);
      const id = res.body.data.messages[0]?.id ?? "";
      await firstAttempts([id]);
      const unknown = await getMessage(key, id);
      expect(unknown).toMatchObject({ status: "queued", metadata: { outcome: "unknown", attempts: 1 } });
      expect(unknown.metadata.last_error).toMatch(reason);
      const entry = await outboxEntry(session, id);
      const since = entry?.first_attempt_at ?? 0;

      // Asked after the grace period, and a minute before the settle time: no status came, but it
      // is too early to tell; the next question is set for the settle time itself.
      for (const at of [entry?.next_attempt_at ?? 0, since + SETTLE_MS - 60_000]) {
        await alarmAt(session, at);
        expect(await outboxEntry(session, id)).toMatchObject({
          state: "unknown",
          next_attempt_at: since + SETTLE_MS,
        });
        expect(meta.graph.sendsOf(id)).toHaveLength(1);
        expect((await getMessage(key, id)).status).toBe("queued");
      }

      await alarmAt(session, since + SETTLE_MS);
      const sends = meta.graph.sendsOf(id);
      expect(sends).toHaveLength(2);
      expect(sends[1]?.body).toEqual(sends[0]?.body);
      expect(sends[1]?.body?.biz_opaque_callback_data).toBe(id);
      await expect.poll(async () => (await getMessage(key, id)).status).toBe("sent");
      const sent = await getMessage(key, id);
      expect(sent).toMatchObject({ provider_message_id: sends[1]?.wamid, metadata: { attempts: 2 } });
      expect(sent.metadata.send_attempts?.map((a) => a.outcome)).toEqual(["unknown", "absent"]);
    },
  );
});
