import { describe, expect, it } from "vitest";
import { call, createAccount, showSession } from "../helpers";
import { addNumber, cloudApiSession, linkNumber, postWebhook, useFakeGraph } from "./webhooks-fixtures";

// A Cloud API session's `health.quality` (docs/sessions.md, Session health): Meta's `quality_rating` of the
// number, read by the gateway check and again when Meta's `phone_number_quality_update` webhook
// says the number changed (its payload carries no rating: Meta's webhook reference of that name).

const graph = useFakeGraph();

function qualityUpdate(wabaId: string, displayPhoneNumber: string) {
  return {
    object: "whatsapp_business_account",
    entry: [
      {
        id: wabaId,
        time: Math.floor(Date.now() / 1000),
        changes: [
          {
            field: "phone_number_quality_update",
            value: {
              display_phone_number: displayPhoneNumber,
              event: "DOWNGRADE",
              current_limit: "TIER_1K",
              old_limit: "TIER_10K",
              max_daily_conversations_per_business: "TIER_1K",
            },
          },
        ],
      },
    ],
  };
}

async function qualityEvents(key: string, id: string) {
  const res = await call<{ data: Array<{ data: { id: string; health: { quality: string | null } } }> }>(
    "GET",
    "/v1/events?filter[type]=session.health_changed",
    { key },
  );
  return res.body.data.filter((e) => e.data.id === id).map((e) => e.data.health.quality);
}

describe("Cloud API quality", () => {
  it("is read by the gateway check, GREEN → green; NA → null", async () => {
    const { key } = await createAccount();
    const number = addNumber(graph());
    const id = await linkNumber(key, number);
    expect((await call("GET", `/v1/chatapp/sessions/${id}/gateway`, { key })).status).toBe(200);
    expect((await showSession(key, id)).health).toMatchObject({
      timelock: null,
      cap: null,
      quality: "green",
    });
    graph().addNumber({ ...number, qualityRating: "NA" });
    await call("GET", `/v1/chatapp/sessions/${id}/gateway`, { key });
    expect((await showSession(key, id)).health.quality).toBeNull();
    // Newest first.
    expect(await qualityEvents(key, id)).toEqual([null, "green"]);
  });

  it("phone_number_quality_update makes the number's session read its rating again", async () => {
    const { key } = await createAccount();
    const number = addNumber(graph());
    const id = await linkNumber(key, number);
    const { wabaId } = number;
    graph().addNumber({ ...number, qualityRating: "RED" });
    const res = await postWebhook(qualityUpdate(wabaId, "15550100001"));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, ignored: false });
    expect((await showSession(key, id)).health.quality).toBe("red");
    expect(await qualityEvents(key, id)).toEqual(["red"]);
  });

  it("ignores an update for a number no session holds, or another WABA's", async () => {
    const { key } = await createAccount();
    const { id, wabaId } = await cloudApiSession(graph(), key);
    addNumber(graph());
    expect((await postWebhook(qualityUpdate(wabaId, "15559999999"))).body).toEqual({
      success: true,
      ignored: true,
    });
    expect((await postWebhook(qualityUpdate("399999999999999", "15550100001"))).body).toEqual({
      success: true,
      ignored: true,
    });
    expect((await showSession(key, id)).health.quality).toBeNull();
  });
});
