import { HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { EvolutionGateway } from "../../src/gateways/evolution";
import { EVOLUTION_SETTINGS, EVOLUTION_URL } from "../gateway-config";
import { call, createAccount, createSession } from "../helpers";
import { network, useNetwork } from "../network";
import { FakeEvolution, postEvolutionEvent } from "./fake-evolution";

// Number checks through Evolution API (src/gateways/evolution/contacts.ts) against the fake
// server: one `POST /chat/whatsappNumbers/{instance}` with `{ numbers: [<digits>…] }` for every
// number the cache lacks, each answered by the `OnWhatsAppDto` whose `number` it is.

useNetwork();

const PHONE = "+14155552671";
const OWNER_JID = "14155552671@s.whatsapp.net";
const ON = "+14155550123";
const OFF = "+14155550000";
const OTHER = "+5511987654321";

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

function check(key: string, id: string, numbers: string[]) {
  return call<{ data: { number: string; on_chatapp: boolean | null }[] }>(
    "POST",
    `/v1/chatapp/sessions/${id}/contacts/check`,
    { key, body: { numbers } },
  );
}

const checkCalls = (name: string) =>
  evolution.calls.filter((c) => c === `POST /chat/whatsappNumbers/${name}`);

describe("number checks through Evolution API", () => {
  it("asks for every number in one call, as digits, and answers each `exists`", async () => {
    const { key } = await createAccount(1);
    const { id, name } = await connectedEvolutionSession(key);

    const res = await check(key, id, [ON, OFF, OTHER]);

    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((c) => [c.number, c.on_chatapp])).toEqual([
      [ON, true],
      [OFF, false],
      [OTHER, true],
    ]);
    expect(checkCalls(name)).toHaveLength(1);
    expect(evolution.checked).toEqual([["14155550123", "14155550000", "5511987654321"]]);
  });

  it("asks nothing for numbers it answered within 7 days, and only the new ones otherwise", async () => {
    const { key } = await createAccount(1);
    const { id, name } = await connectedEvolutionSession(key);
    await check(key, id, [ON, OFF]);

    const again = await check(key, id, [OFF, ON]);
    expect(again.body.data.map((c) => c.on_chatapp)).toEqual([false, true]);
    expect(checkCalls(name)).toHaveLength(1);

    await check(key, id, [ON, OTHER, OFF]);
    expect(evolution.checked).toEqual([["14155550123", "14155550000"], ["5511987654321"]]);
  });

  it("answers null when Evolution refuses (its connection closed), caches nothing, and asks again next time", async () => {
    const { key } = await createAccount(1);
    const { id, name } = await connectedEvolutionSession(key);
    evolution.instance(name).state = "close";

    const res = await check(key, id, [ON, OFF]);
    expect(res.status).toBe(200);
    expect(res.body.data.map((c) => c.on_chatapp)).toEqual([null, null]);
    expect(evolution.checked).toEqual([]);

    evolution.instance(name).state = "open";
    const later = await check(key, id, [ON, OFF]);
    expect(later.body.data.map((c) => c.on_chatapp)).toEqual([true, false]);
    expect(checkCalls(name)).toHaveLength(2);
  });

  it("a number the answer does not name is null (gateway level)", async () => {
    network.use(
      http.post(`${EVOLUTION_URL}/chat/whatsappNumbers/:name`, () =>
        HttpResponse.json([{ jid: "14155550123@s.whatsapp.net", exists: true, number: "14155550123" }]),
      ),
    );
    const gateway = new EvolutionGateway(EVOLUTION_SETTINGS);
    const answers = await gateway.checkNumbers("session_x", [ON, OFF]);
    expect([...answers]).toEqual([
      [ON, true],
      [OFF, null],
    ]);
  });
});
