import { beforeEach, describe, expect, it } from "vitest";
import { createAccount, createSession, TIMESTAMP } from "../helpers";
import { ms, sendText } from "../message-fixtures";
import { useNetwork } from "../network";
import { typeThenSend, typingStarted } from "../typing-fixtures";
import { FakeWaha, postWahaEvent } from "./fake-waha";

// "Typing…" before a send on WAHA (docs/messages.md, Typing before a send): `POST /api/startTyping`, the
// send after the typing's time, `POST /api/stopTyping` before the send as WAHA's docs advise;
// a typing WAHA refuses never holds up or fails the send.

useNetwork();

const PHONE = "+14155552671";
const CONTACT = "+14155550123";
const CHAT_ID = "14155550123@c.us";
/** 84 characters: 84 / 30 = 2.8, 3 s of typing. */
const TEXT = "Thanks for your order! It leaves our warehouse today and should reach you by Friday.";

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

async function connectedSession(key: string) {
  const { session } = await createSession(key);
  waha.link(session.session_id, PHONE, "Ada");
  await postWahaEvent(
    session.session_id,
    "session.status",
    { status: "WORKING" },
    { me: { id: "14155552671@c.us" } },
  );
  return session;
}

/** The typing and send calls WAHA got, in order. */
const typingAndSends = () =>
  waha.calls.filter((c) => /^POST \/api\/(startTyping|stopTyping|sendText)$/.test(c)).map((c) => c.slice(10));

describe("simulate_typing on WAHA", () => {
  it("starts typing, sends when its time is up, stopping it just before the send", async () => {
    expect([...TEXT].length).toBe(84);
    const { key } = await createAccount();
    const session = await connectedSession(key);
    const res = await sendText(key, session.id, [CONTACT], { content: TEXT, simulate_typing: true });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";

    const { message, startedAt } = await typeThenSend(key, session.id, id, 3000);
    expect(typingAndSends()).toEqual(["startTyping", "stopTyping", "sendText"]);
    expect(waha.typing.map(({ state, session: name, chatId }) => ({ state, name, chatId }))).toEqual([
      { state: "start", name: session.session_id, chatId: CHAT_ID },
      { state: "stop", name: session.session_id, chatId: CHAT_ID },
    ]);
    expect(waha.bodies.find((b) => b.call === "POST /api/startTyping")?.body).toEqual({
      session: session.session_id,
      chatId: CHAT_ID,
    });
    expect(message.status).toBe("sent");
    expect(message.metadata.typing).toEqual({
      ms: 3000,
      started_at: expect.stringMatching(TIMESTAMP),
      shown: true,
    });
    expect(ms(message.metadata.typing?.started_at ?? null)).toBe(startedAt);
    expect(waha.sent).toHaveLength(1);
    expect(waha.sent[0]?.body.text).toBe(TEXT);
  });

  it("a typing WAHA refuses is recorded, not retried, and the message is sent all the same", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    waha.typingFault = true;
    const res = await sendText(key, session.id, [CONTACT], { content: TEXT, simulate_typing: true });
    const id = res.body.data.messages[0]?.id ?? "";

    const { message } = await typeThenSend(key, session.id, id, 3000);
    // No stop for a typing that never showed.
    expect(typingAndSends()).toEqual(["startTyping", "sendText"]);
    expect(waha.typing).toEqual([]);
    expect(message.status).toBe("sent");
    expect(message.metadata.typing).toEqual({
      ms: 3000,
      started_at: expect.stringMatching(TIMESTAMP),
      shown: false,
      reason: expect.stringContaining("gateway_http_500"),
    });
    expect(message.metadata.attempts).toBe(1);
  });

  it("a failing stop is only logged: the send goes on", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    const res = await sendText(key, session.id, [CONTACT], { content: TEXT, simulate_typing: true });
    const id = res.body.data.messages[0]?.id ?? "";
    await typingStarted(session.id, id);
    waha.typingFault = true;
    const { message } = await typeThenSend(key, session.id, id, 3000);
    expect(typingAndSends()).toEqual(["startTyping", "stopTyping", "sendText"]);
    expect(message.status).toBe("sent");
    expect(message.metadata.typing).toMatchObject({ ms: 3000, shown: true });
  });
});
