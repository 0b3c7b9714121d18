import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { typingMs } from "../src/messages/typing";
import { campaignMessages, command, createCampaign, outboxStates, recipients } from "./campaign-fixtures";
import { accountD1 } from "./databases";
import { call, createAccount, expectProblem, sessionStub, TIMESTAMP, waitFor } from "./helpers";
import {
  connectedSession,
  driveAlarmUntil,
  getMessage,
  ms,
  type SendResponse,
  sendText,
} from "./message-fixtures";
import { type Typed, typeThenSend, typingStarted } from "./typing-fixtures";

// "Typing…" before a send (docs/messages.md, Typing before a send), on the sandbox: the duration rule, the
// typing's wait through the session's alarm (driven here: a driven alarm runs at the time it was
// armed for, so the tests never sleep the typing out), the pacing it fits in, and what
// `metadata.typing` records.

/** A text of `n` characters. */
const text = (n: number) => "x".repeat(n);

describe("typingMs", () => {
  it("is 1 s per 30 characters, rounded to whole seconds, between 1 s and 8 s", () => {
    expect(typingMs("text", "")).toBe(1000);
    expect(typingMs("text", text(1))).toBe(1000);
    expect(typingMs("text", text(44))).toBe(1000);
    expect(typingMs("text", text(45))).toBe(2000);
    expect(typingMs("text", text(90))).toBe(3000);
    expect(typingMs("text", text(239))).toBe(8000);
    expect(typingMs("text", text(4096))).toBe(8000);
    // Code points, not UTF-16 units: 60 emoji are 60 characters.
    expect(typingMs("text", "😀".repeat(60))).toBe(2000);
  });

  it("counts a caption; media without one and templates take 1 s", () => {
    expect(typingMs("image", text(150))).toBe(5000);
    expect(typingMs("image", null)).toBe(1000);
    expect(typingMs("audio", null)).toBe(1000);
    expect(typingMs("template", JSON.stringify({ name: text(300) }))).toBe(1000);
  });
});

describe("simulate_typing on a sandbox send", () => {
  it("types for the text's time, sends when the alarm the typing set runs, and records it", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    const res = await sendText(key, session.id, ["+14155552671"], {
      content: text(240),
      simulate_typing: true,
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";

    // The send waits for the typing: the session's alarm is set for its end, 8 s on.
    const { message: sent, startedAt } = await typeThenSend(key, session.id, id, 8000);
    expect(sent.status).toBe("sent");
    expect(sent.metadata.typing).toEqual({
      ms: 8000,
      started_at: expect.stringMatching(TIMESTAMP),
      shown: true,
    });
    expect(ms(sent.metadata.typing?.started_at ?? null)).toBe(startedAt);
    expect(sent.metadata.attempts).toBe(1);
    expect(sent.cost).toBe(0.01);
  });

  it("a typing the gateway did not show is recorded and the message still goes (sandbox …0007)", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    const res = await sendText(key, session.id, ["+14155550007"], { content: "hi", simulate_typing: true });
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.messages[0]?.id ?? "";
    await typingStarted(session.id, id);
    await driveAlarmUntil(session.id, async () => (await getMessage(key, id)).status !== "queued");

    const sent = (await getMessage(key, id)) as Typed;
    expect(sent.status).toBe("sent");
    expect(sent.metadata.typing).toEqual({
      ms: 1000,
      started_at: expect.stringMatching(TIMESTAMP),
      shown: false,
      reason: "sandbox_typing_refused",
    });
  });

  it("fits in the pacing: with delay_between 5 s the typing takes the end of the gap, adding nothing", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    const res = await sendText(key, session.id, ["+14155552671", "+14155552672"], {
      content: "Short hello",
      delay_between: 5000,
      simulate_typing: true,
    });
    expect(res.status, res.text).toBe(201);
    const ids = res.body.data.messages.map((m) => m.id);
    await driveAlarmUntil(
      session.id,
      async () =>
        (await Promise.all(ids.map((id) => getMessage(key, id)))).every((m) => m.status !== "queued"),
      20_000,
    );
    const [first, second] = (await Promise.all(ids.map((id) => getMessage(key, id)))) as Typed[];
    // Driven alarms bring the sandbox's acks early too: sent, then delivered or read.
    for (const m of [first, second]) expect(m?.sent_at).toMatch(TIMESTAMP);
    const firstSent = ms(first?.sent_at ?? null);
    const secondTyping = ms(second?.metadata.typing?.started_at ?? null);
    const secondSent = ms(second?.sent_at ?? null);
    // The second's typing starts 1 s before its paced time (4 s after the first send, not at it) …
    expect(secondTyping - firstSent).toBeGreaterThanOrEqual(4000);
    expect(secondTyping - firstSent).toBeLessThan(5000);
    // … and it is sent at its paced time: the gap is delay_between, not delay_between + typing.
    expect(secondSent - firstSent).toBeGreaterThanOrEqual(5000);
    expect(secondSent - firstSent).toBeLessThan(6000);
    expect(second?.metadata.typing).toMatchObject({ ms: 1000, shown: true });
  });

  it("without simulate_typing, no typing and no metadata.typing", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    const res = await sendText(key, session.id, ["+14155552671"]);
    const id = res.body.data.messages[0]?.id ?? "";
    await driveAlarmUntil(session.id, async () => (await getMessage(key, id)).status !== "queued");
    const sent = (await getMessage(key, id)) as Typed;
    expect(sent.status).toBe("sent");
    expect(sent.metadata.typing).toBeUndefined();
  });

  it("simulate_typing must be a boolean", async () => {
    const { key } = await createAccount();
    const session = await connectedSession(key);
    const res = await call<SendResponse>("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: ["+14155552671"],
        type: "text",
        content: "hi",
        simulate_typing: "yes",
      },
    });
    expectProblem(res, 422, "validation_failed");
    expect(JSON.stringify(res.body)).toContain("simulate_typing");
  });
});

describe("simulate_typing on a campaign", () => {
  it("is kept on the campaign and its messages, types before each, and survives a failover", async () => {
    const { key, accountId } = await createAccount();
    const a = (await connectedSession(key)).id;
    const b = (await connectedSession(key)).id;
    const draft = await createCampaign(key, {
      chatapp_session_ids: [a, b],
      recipients: recipients(4),
      delay_between: 60_000,
      simulate_typing: true,
    });
    expect((draft as typeof draft & { simulate_typing: boolean }).simulate_typing).toBe(true);
    expect((await command(key, draft.id, "start")).status).toBe(200);
    // Each session types (1 s) and sends its first message, then holds the next for a minute.
    for (const session of [a, b])
      await waitFor(
        async () => {
          const states = await outboxStates(session);
          if (states.sent !== 1 || states.pending !== 1) throw new Error(JSON.stringify(states));
          return true;
        },
        {
          reason: "each session to type and send its first message (the outbound queue hands them over)",
          timeoutMs: 10_000,
          intervalMs: 50,
        },
      );
    const { results } = await (await accountD1(accountId))
      .prepare("SELECT id, simulate_typing FROM messages WHERE campaign_id = ?")
      .bind(draft.id)
      .all<{ id: string; simulate_typing: number }>();
    expect(results.map((row) => row.simulate_typing)).toEqual([1, 1, 1, 1]);
    await waitFor(
      async () => {
        const sent = (await campaignMessages(draft.id)).filter((m) => m.sent_at !== null);
        expect(sent.map((m) => JSON.parse(m.metadata).typing)).toEqual([
          { ms: 1000, started_at: expect.stringMatching(TIMESTAMP), shown: true },
          { ms: 1000, started_at: expect.stringMatching(TIMESTAMP), shown: true },
        ]);
        return true;
      },
      { reason: "both sends written to D1 with their typing", timeoutMs: 5_000, intervalMs: 50 },
    );

    // A ban moves a's waiting message to b, which will type before it too.
    expect((await call("POST", `/sandbox/sessions/${a}/ban`, { key, body: {} })).status).toBe(200);
    const moved = (await campaignMessages(draft.id)).filter((m) => m.metadata.includes("failover"));
    expect(moved).toHaveLength(1);
    await waitFor(
      async () => {
        const typing = await runInDurableObject(sessionStub(b), (_instance, state) =>
          state.storage.sql
            .exec<{ typing_ms: number }>("SELECT typing_ms FROM outbox WHERE id = ?", moved[0]?.id ?? "")
            .toArray(),
        );
        expect(typing).toEqual([{ typing_ms: 1000 }]);
        return true;
      },
      {
        reason: "the moved message to reach b (the outbound queue hands it over)",
        timeoutMs: 8_000,
        intervalMs: 50,
      },
    );
  });
});
