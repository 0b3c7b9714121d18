import { beforeEach, describe, expect, it } from "vitest";
import { accountD1 } from "../databases";
import { call, createAccount, expectProblem } from "../helpers";
import { MEDIA_HOST } from "../media-host";
import { balanceOf } from "../message-fixtures";
import { useNetwork } from "../network";
import { connectedWahaSession, FakeWaha } from "./fake-waha";

// WAHA's API has no sticker message (its OpenAPI document lists no sticker request): a sticker on
// a WAHA session is refused before anything is fetched or charged (docs/messages.md, Sending
// messages → Stickers; lib/gateway-kinds.ts `sendsStickers`).

useNetwork();

let waha: FakeWaha;
beforeEach(() => {
  waha = new FakeWaha().install();
});

describe("WAHA: stickers", () => {
  it("are 422 type_not_supported_by_gateway naming type: nothing fetched, charged, stored or sent", async () => {
    const { key, accountId } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const res = await call("POST", "/v1/chatapp/messages", {
      key,
      body: {
        chatapp_session_id: session.id,
        to_number: ["+14155550123"],
        type: "sticker",
        media_url: `${MEDIA_HOST}/s/wave.webp`,
      },
    });
    expectProblem(res, 422, "type_not_supported_by_gateway");
    expect(Object.keys((res.body as { errors?: object }).errors ?? {})).toEqual(["type"]);
    expect(await balanceOf(accountId)).toBe(10);
    const count = await (await accountD1(accountId))
      .prepare("SELECT COUNT(*) AS n FROM messages WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
    expect(waha.sent).toEqual([]);
  });

  it("a sticker campaign with a WAHA session is refused the same way before it is stored", async () => {
    const { key } = await createAccount(10);
    const session = await connectedWahaSession(waha, key);
    const res = await call("POST", "/v1/chatapp/campaigns", {
      key,
      body: {
        name: "Thanks",
        chatapp_session_ids: [session.id],
        type: "sticker",
        media_url: `${MEDIA_HOST}/s/wave.webp`,
        recipients: [{ to_number: "+14155550123" }],
      },
    });
    expectProblem(res, 422, "type_not_supported_by_gateway");
    const list = await call<{ data: unknown[] }>("GET", "/v1/chatapp/campaigns", { key });
    expect(list.body.data).toEqual([]);
  });
});
