import { runDurableObjectAlarm } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { clientMessageIdOf } from "../../src/gateways/client-id";
import { createAccount, createSession, sessionStub } from "../helpers";
import { balanceOf, firstAttempts, getMessage, sendText } from "../message-fixtures";
import { useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// A receipt for a message whose send outcome is unknown (docs/exactly-once.md, Exactly once): Evolution API
// keeps our client id as the message's id (`key.id`), so a `messages.update` for it proves the message
// sent. It is settled by that receipt (`settled_by: "status_webhook"`) and the receipt applies,
// without a lookup and without a second send.

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

describe("a receipt for a message whose outcome is unknown", () => {
  it("settles it (status_webhook) and applies: delivered, stored once, charged once, no lookup", async () => {
    const { key, accountId } = await createAccount(10);
    const { id: session, name } = await connectedEvolutionSession(key);
    evolution.sendFault = "lost";
    const id = (await sendText(key, session, [CONTACT])).body.data.messages[0]?.id ?? "";
    await firstAttempts([id]);
    expect(await getMessage(key, id)).toMatchObject({ status: "queued", metadata: { outcome: "unknown" } });
    evolution.sendFault = null;

    const providerId = clientMessageIdOf(id);
    const res = await postEvolutionEvent(
      name,
      "messages.update",
      evolution.messageUpdate(providerId, "DELIVERY_ACK"),
    );
    expect(res.status).toBe(200);
    const delivered = await getMessage(key, id);
    expect(delivered).toMatchObject({
      status: "delivered",
      provider_message_id: providerId,
      metadata: { attempts: 1, settled_by: "status_webhook" },
    });
    expect(delivered.metadata).not.toHaveProperty("outcome");
    expect(delivered.delivered_at).not.toBeNull();

    // The settlement the alarm would have asked for is not made: nothing is unknown any more.
    await runDurableObjectAlarm(sessionStub(session));
    expect(evolution.calls.filter((c) => c.startsWith("POST /chat/findMessages"))).toEqual([]);
    expect(evolution.sent.map((s) => s.id)).toEqual([providerId]);
    expect(await balanceOf(accountId)).toBeCloseTo(9.99, 2);
    expect((await getMessage(key, id)).status).toBe("delivered");
  });
});
