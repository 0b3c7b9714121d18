import { HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { EvolutionGateway } from "../../src/gateways/evolution";
import { GatewayError } from "../../src/gateways/gateway";
import { accountD1 } from "../databases";
import { EVOLUTION_API_KEY, EVOLUTION_SETTINGS, EVOLUTION_URL } from "../gateway-config";
import { call, createAccount, createSession, expectProblem } from "../helpers";
import { getMessage } from "../message-fixtures";
import { network, useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Read receipts through Evolution API (docs/messages.md, Chat actions): `POST /v1/chatapp/messages/{id}/read`
// on an Evolution session sends `POST /chat/markMessageAsRead/{instance}` with the contact's
// message key (`readMessageSchema`), against the fake server (fake-evolution.ts).

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const CONTACT = "+14155550123";
const CONTACT_JID = "14155550123@s.whatsapp.net";
const LID = "123456789012345@lid";

interface Shown {
  id: string;
  status: string;
  read_at: string | null;
}

let evolution: FakeEvolution;
beforeEach(() => {
  evolution = new FakeEvolution().install();
});

async function connectedEvolutionSession(key: string) {
  const { session } = await createSession(key);
  const name = session.session_id;
  await postEvolutionEvent(name, "connection.update", evolution.link(name, PHONE, "Ada"), {
    sender: OWNER_JID,
  });
  return { id: session.id, name };
}

/** Our id of the incoming message Evolution knows as `providerMessageId`. */
async function incomingId(accountId: string, providerMessageId: string): Promise<string> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT id FROM messages WHERE account_id = ? AND provider_message_id = ?")
    .bind(accountId, providerMessageId)
    .first<{ id: string }>();
  return row?.id ?? "";
}

function markRead(key: string, id: string) {
  return call<{ data: Shown; marked: number }>("POST", `/v1/chatapp/messages/${id}/read`, { key });
}

describe("Evolution API: marking a message read", () => {
  it("sends the message's key with the contact's phone JID, and the chat's messages become read", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    for (const [id, text] of [
      ["3EB0READ0001", "one"],
      ["3EB0READ0002", "two"],
    ] as const) {
      await postEvolutionEvent(
        session.name,
        "messages.upsert",
        evolution.incomingText(session.name, id, CONTACT, text),
      );
    }
    const first = await incomingId(accountId, "3EB0READ0001");
    const second = await incomingId(accountId, "3EB0READ0002");

    const res = await markRead(key, second);
    expect(res.status).toBe(200);
    expect(res.body.marked).toBe(2);
    expect(res.body.data).toMatchObject({ id: second, status: "read" });
    expect(evolution.bodies.filter((b) => b.call.startsWith("POST /chat/markMessageAsRead/"))).toEqual([
      {
        call: `POST /chat/markMessageAsRead/${session.name}`,
        body: { readMessages: [{ remoteJid: CONTACT_JID, fromMe: false, id: "3EB0READ0002" }] },
      },
    ]);
    expect(evolution.reads).toEqual([
      { instance: session.name, keys: [{ remoteJid: CONTACT_JID, fromMe: false, id: "3EB0READ0002" }] },
    ]);
    expect(((await getMessage(key, first)) as unknown as Shown).status).toBe("read");

    // Again: the receipt goes out again, nothing moves.
    const again = await markRead(key, second);
    expect(again.body.marked).toBe(0);
    expect(evolution.reads).toHaveLength(2);
  });

  it("a contact known by its LID alone is marked read in the @lid chat", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingFromLid(session.name, "3EB0LIDREAD1", LID, "hi"),
    );
    const res = await markRead(key, await incomingId(accountId, "3EB0LIDREAD1"));
    expect(res.status).toBe(200);
    expect(evolution.reads).toEqual([
      { instance: session.name, keys: [{ remoteJid: LID, fromMe: false, id: "3EB0LIDREAD1" }] },
    ]);
  });

  it("Evolution's 500 (a closed connection) is 503 gateway_unavailable; its 404 is 502 gateway_rejected; nothing is marked", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedEvolutionSession(key);
    await postEvolutionEvent(
      session.name,
      "messages.upsert",
      evolution.incomingText(session.name, "3EB0FAIL0001", CONTACT, "hello"),
    );
    const id = await incomingId(accountId, "3EB0FAIL0001");

    evolution.instance(session.name).state = "close";
    expectProblem(await markRead(key, id), 503, "gateway_unavailable");
    evolution.instances.delete(session.name);
    expectProblem(await markRead(key, id), 502, "gateway_rejected");

    expect(evolution.reads).toEqual([]);
    expect(((await getMessage(key, id)) as unknown as Shown).status).toBe("delivered");
  });
});

describe("Evolution API gateway: markRead", () => {
  const SESSION = "session_2f3e4d5c-6b7a-4890-9abc-def012345678";
  const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);

  beforeEach(async () => {
    await gateway.create(SESSION);
    evolution.link(SESSION, PHONE);
  });

  it("refuses a BSUID chat without a call (permanent)", async () => {
    const error = await gateway
      .markRead(SESSION, { chat: "US.13491208655302741918", providerMessageId: "3EB0BSUID001" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ reason: "recipient_not_supported", permanent: true });
    expect(evolution.calls.filter((c) => c.includes("markMessageAsRead"))).toEqual([]);
  });

  it("an answer other than read: success is gateway_bad_response (transient)", async () => {
    network.use(
      http.post(`${EVOLUTION_URL}/chat/markMessageAsRead/:name`, () =>
        HttpResponse.json({ message: "Read messages" }, { status: 201 }),
      ),
    );
    const error = await gateway
      .markRead(SESSION, { chat: CONTACT, providerMessageId: "3EB0ODD00001" })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: "gateway_bad_response", permanent: false });
  });

  it("the fake holds a markMessageAsRead body to readMessageSchema", async () => {
    const post = (body: object) =>
      fetch(`${EVOLUTION_URL}/chat/markMessageAsRead/${SESSION}`, {
        method: "POST",
        headers: { apikey: EVOLUTION_API_KEY, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const key = { remoteJid: CONTACT_JID, fromMe: false, id: "3EB0VALID001" };
    for (const refused of [
      {},
      { readMessages: [] },
      { readMessages: [key, key] },
      { readMessages: [{ ...key, id: "" }] },
      { readMessages: [{ ...key, remoteJid: "" }] },
      { readMessages: [{ ...key, fromMe: "false" }] },
      { readMessages: [{ remoteJid: CONTACT_JID, id: "3EB0VALID001" }] },
      { readMessages: [{ ...key, participant: CONTACT_JID }] },
      { readMessages: [key], chat: CONTACT_JID },
    ]) {
      expect((await post(refused)).status).toBe(400);
    }
    expect(evolution.reads).toEqual([]);
    const accepted = await post({ readMessages: [key] });
    expect(accepted.status).toBe(201);
    expect(await accepted.json()).toEqual({ message: "Read messages", read: "success" });
    expect(evolution.reads).toEqual([{ instance: SESSION, keys: [key] }]);
  });
});
