import { HttpResponse, http } from "msw";
import { beforeEach, describe, expect, it } from "vitest";
import { WahaGateway } from "../../src/gateways/waha";
import { WAHA_SETTINGS, WAHA_URL } from "../gateway-config";
import { call, createAccount } from "../helpers";
import { network, useNetwork } from "../network";
import { connectedWahaSession, FakeWaha } from "./fake-waha";

// Number checks through WAHA (src/gateways/waha/contacts.ts) against the fake server: one
// `GET /api/contacts/check-exists?phone=<digits>&session=<name>` per number (WAHA's OpenAPI
// document), `numberExists` as the answer, the account's cache asked first, and a WAHA in trouble
// asked no further once a call failed.

useNetwork();

const ON = "+14155550123";
const OFF = "+14155550000";

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

function check(key: string, id: string, numbers: string[]) {
  return call<{ data: { number: string; on_chatapp: boolean | null }[] }>(
    "POST",
    `/v1/chatapp/sessions/${id}/contacts/check`,
    { key, body: { numbers } },
  );
}

const checkCalls = () => waha.calls.filter((c) => c === "GET /api/contacts/check-exists");

describe("number checks through WAHA", () => {
  it("asks check-exists once per number, as digits of the session, and answers numberExists", async () => {
    const { key } = await createAccount(1);
    const { id } = await connectedWahaSession(waha, key);

    const res = await check(key, id, [ON, OFF]);

    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((c) => [c.number, c.on_chatapp])).toEqual([
      [ON, true],
      [OFF, false],
    ]);
    expect(waha.checked.sort()).toEqual(["14155550000", "14155550123"]);
    expect(checkCalls()).toHaveLength(2);
  });

  it("asks nothing for numbers it answered within 7 days, and only the new ones otherwise", async () => {
    const { key } = await createAccount(1);
    const { id } = await connectedWahaSession(waha, key);
    await check(key, id, [ON, OFF]);

    const again = await check(key, id, [OFF, ON]);
    expect(again.body.data.map((c) => c.on_chatapp)).toEqual([false, true]);
    expect(checkCalls()).toHaveLength(2);

    await check(key, id, [ON, "+14155550124"]);
    expect(waha.checked.at(-1)).toBe("14155550124");
    expect(checkCalls()).toHaveLength(3);
  });

  it("answers null when WAHA fails, caches nothing, stops asking after the first failure, and asks again next time", async () => {
    const { key } = await createAccount(1);
    const { id } = await connectedWahaSession(waha, key);
    waha.down = true;
    const numbers = Array.from({ length: 10 }, (_, i) => `+1415555${String(1000 + i)}`);

    const res = await check(key, id, numbers);
    expect(res.status).toBe(200);
    expect(res.body.data.map((c) => c.on_chatapp)).toEqual(numbers.map(() => null));
    // Four calls run side by side; none starts after one has failed.
    expect(checkCalls().length).toBeLessThanOrEqual(4);

    waha.down = false;
    const later = await check(key, id, numbers.slice(0, 2));
    expect(later.body.data.map((c) => c.on_chatapp)).toEqual([true, true]);
    expect(waha.checked).toEqual(numbers.slice(0, 2).map((n) => n.slice(1)));
  });

  it("a gateway answer of another shape is null for that number (gateway level)", async () => {
    network.use(http.get(`${WAHA_URL}/api/contacts/check-exists`, () => HttpResponse.json({ exists: true })));
    const gateway = new WahaGateway(WAHA_SETTINGS);
    const answers = await gateway.checkNumbers("session_x", [ON]);
    expect([...answers]).toEqual([[ON, null]]);
  });
});
