import { describe, expect, it } from "vitest";
import { type OptOut, optOutsOf } from "./contact-fixtures";
import { call, createAccount, expectProblem } from "./helpers";
import { connectedSession } from "./message-fixtures";

// The opt-out list and contacts (docs/campaigns.md, Opt-outs; docs/contacts.md, Contacts): an entry is added
// and removed for the person, by every address the account's contacts link, and a user id is an
// address the API takes beside a number.

const LID = "120363025246125888@lid";
const BSUID = "US.13491208655302741918";
const NUMBER = "+14155552671";

async function fixture() {
  const { key } = await createAccount(10);
  const session = (await connectedSession(key)).id;
  const inbound = async (from: Record<string, string>, content: string) => {
    const res = await call("POST", `/sandbox/sessions/${session}/inbound`, {
      key,
      body: { ...from, type: "text", content },
    });
    expect(res.status, res.text).toBe(201);
  };
  const listed = async () =>
    (await optOutsOf(key)).map((o) => [o.to_number ?? o.user_id, o.source, o.keyword]).sort();
  return { key, inbound, listed };
}

describe("opt-outs of a contact known by several addresses", () => {
  it("DELETE by one address removes them all, and the contact's next message does not list them again", async () => {
    const f = await fixture();
    await f.inbound({ from_number: NUMBER, from_user_id: LID }, "STOP");
    expect(await f.listed()).toEqual([
      [NUMBER, "keyword", "STOP"],
      [LID, "keyword", "STOP"],
    ]);

    const removed = await call("DELETE", `/v1/opt-outs/${encodeURIComponent(NUMBER)}`, { key: f.key });
    expect(removed.status).toBe(204);
    expect(await f.listed()).toEqual([]);
    // Learning another identifier copies an entry of the contact to it: none is left to copy.
    await f.inbound({ from_number: NUMBER, from_user_id: LID }, "hello again");
    expect(await f.listed()).toEqual([]);
    expectProblem(
      await call("DELETE", `/v1/opt-outs/${encodeURIComponent(LID)}`, { key: f.key }),
      404,
      "not_found",
    );
  });

  it("POST by to_user_id adds the user id and the number linked to it; GET and DELETE take the user id", async () => {
    const f = await fixture();
    await f.inbound({ from_number: NUMBER, from_user_id: BSUID }, "hi");
    const added = await call<{ data: OptOut }>("POST", "/v1/opt-outs", {
      key: f.key,
      body: { to_user_id: BSUID },
    });
    expect(added.status, added.text).toBe(201);
    expect(added.body.data).toMatchObject({ to_number: null, user_id: BSUID, source: "api", keyword: null });
    expect(await f.listed()).toEqual([
      [NUMBER, "api", null],
      [BSUID, "api", null],
    ]);

    const shown = await call<{ data: OptOut }>("GET", `/v1/opt-outs/${BSUID}`, { key: f.key });
    expect(shown.body.data).toMatchObject({ to_number: null, user_id: BSUID });
    const again = await call<{ data: OptOut }>("POST", "/v1/opt-outs", {
      key: f.key,
      body: { to_user_id: BSUID },
    });
    expect(again.status).toBe(200);

    expect((await call("DELETE", `/v1/opt-outs/${BSUID}`, { key: f.key })).status).toBe(204);
    expect(await f.listed()).toEqual([]);
  });

  it("refuses both addresses, neither, or a user id that is no user id, naming the field", async () => {
    const f = await fixture();
    const both = expectProblem(
      await call("POST", "/v1/opt-outs", { key: f.key, body: { to_number: NUMBER, to_user_id: LID } }),
      422,
      "validation_failed",
    );
    expect(both.errors).toEqual({ to_user_id: ["give to_number or to_user_id, not both"] });
    const none = expectProblem(
      await call("POST", "/v1/opt-outs", { key: f.key, body: {} }),
      422,
      "validation_failed",
    );
    expect(none.errors).toEqual({ to_number: ["required (or to_user_id)"] });
    const bad = expectProblem(
      await call("POST", "/v1/opt-outs", { key: f.key, body: { to_user_id: "jane@lid" } }),
      422,
      "validation_failed",
    );
    expect(Object.keys(bad.errors as object)).toEqual(["to_user_id"]);
    expect(await f.listed()).toEqual([]);
  });
});
