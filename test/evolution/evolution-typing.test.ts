import { beforeEach, describe, expect, it } from "vitest";
import { GATEWAY_TIMEOUT_MS } from "../gateway-config";
import { createAccount, createSession, TIMESTAMP } from "../helpers";
import { ms, sendText, waitForMessages } from "../message-fixtures";
import { useNetwork } from "../network";
import type { Typed } from "../typing-fixtures";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// "Typing…" before a send on Evolution API (docs/messages.md, Typing before a send): one `POST
// /chat/sendPresence/{instance}` `{ number, delay, presence: "composing" }`, which Evolution holds
// for `delay` ms before it answers (so the call outlasts the usual gateway timeout), then the
// send; nothing to stop. A presence Evolution refuses never holds up or fails the send.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
});

async function connectedEvolutionSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  const data = evolution.link(name, PHONE, "Ada");
  await postEvolutionEvent(name, "connection.update", data, { sender: OWNER_JID });
  return { id: session.id, name };
}

/** The presence and send calls Evolution got, in order. */
const presenceAndSends = () =>
  evolution.calls
    .filter((c) => /^POST \/(chat\/sendPresence|message\/sendText)\//.test(c))
    .map((c) => c.split("/")[2]);

describe("simulate_typing on Evolution API", () => {
  it("shows composing for the typing's time, then sends", async () => {
    const { key } = await createAccount();
    const { id: session, name } = await connectedEvolutionSession(key);
    const res = await sendText(key, session, [CONTACT], { content: "See you at 6", simulate_typing: true });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    const [sent] = (await waitForMessages(key, [id])) as Typed[];

    expect(presenceAndSends()).toEqual(["sendPresence", "sendText"]);
    expect(evolution.bodies.find((b) => b.call.startsWith("POST /chat/sendPresence/"))?.body).toEqual({
      number: "14155550123",
      delay: 1000,
      presence: "composing",
    });
    const [presence] = evolution.presences;
    expect(presence).toMatchObject({
      instance: name,
      number: "14155550123",
      presence: "composing",
      delay: 1000,
    });
    // The call lasted the typing, longer than the usual gateway timeout, and the send came after it.
    expect(1000).toBeGreaterThan(GATEWAY_TIMEOUT_MS);
    expect((presence?.to ?? 0) - (presence?.from ?? 0)).toBeGreaterThanOrEqual(1000);
    expect(ms(sent?.sent_at ?? null)).toBeGreaterThanOrEqual(presence?.to ?? Number.POSITIVE_INFINITY);
    expect(sent?.status).toBe("sent");
    expect(sent?.metadata.typing).toEqual({
      ms: 1000,
      started_at: expect.stringMatching(TIMESTAMP),
      shown: true,
    });
    expect(ms(sent?.metadata.typing?.started_at ?? null)).toBeLessThanOrEqual(presence?.from ?? 0);
    expect(evolution.sent).toHaveLength(1);
  });

  it("a presence Evolution refuses is recorded and the message is sent all the same", async () => {
    const { key } = await createAccount();
    const { id: session } = await connectedEvolutionSession(key);
    evolution.presenceFault = true;
    const res = await sendText(key, session, [CONTACT], { content: "See you at 6", simulate_typing: true });
    const id = res.body.data.messages[0]?.id ?? "";
    const [sent] = (await waitForMessages(key, [id])) as Typed[];

    expect(presenceAndSends()).toEqual(["sendPresence", "sendText"]);
    expect(evolution.presences).toEqual([]);
    expect(sent?.status).toBe("sent");
    expect(sent?.metadata.attempts).toBe(1);
    expect(sent?.metadata.typing).toEqual({
      ms: 1000,
      started_at: expect.stringMatching(TIMESTAMP),
      shown: false,
      reason: expect.stringContaining("gateway_http_400"),
    });
  });
});
