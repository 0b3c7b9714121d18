import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { templateCursor } from "../../fakes/cloud-api/graph.ts";
import { openSecret, sealSecret } from "../../src/lib/sealed-secret";
import { accountD1, everyAccountD1 } from "../databases";
import { CREDENTIALS_KEY } from "../gateway-config";
import { ADMIN_TOKEN, call, createAccount, expectProblem, sessionStub } from "../helpers";
import { everyD1Row, TOKEN, useExampleNumber, WABA_ID } from "./sessions-fixtures";
import { addNumber, createSession, deliverWebhooks, linkNumber } from "./webhooks-fixtures";

// Linking a business number by its Meta ids and access token (POST /v1/chatapp/sessions with
// `gateway: "cloud_api"`): Meta reads the number at once; its refusal stores nothing; the token
// is kept only sealed (src/lib/sealed-secret.ts), in D1 and in the session object alike.

const meta = useExampleNumber();

/** The D1 rows of the fake's number in every account database (D1 keeps those of earlier tests). */
async function numberRows(): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const d1 of everyAccountD1()) {
    const found = await d1
      .prepare("SELECT * FROM cloud_api_numbers WHERE phone_number_id = ?")
      .bind(meta.number.phoneNumberId)
      .all<Record<string, unknown>>();
    rows.push(...found.results);
  }
  return rows;
}

async function sessionRows(accountId: string): Promise<number> {
  const row = await (await accountD1(accountId))
    .prepare("SELECT count(*) AS n FROM sessions WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>();
  return row?.n ?? -1;
}

/** Every table of the session object's SQLite storage, as JSON text. */
function objectStorage(id: string): Promise<string> {
  return runInDurableObject(sessionStub(id), (_instance, state) => {
    const sql = state.storage.sql;
    const tables = sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'")
      .toArray();
    return tables
      .map(({ name }) => `${name}: ${JSON.stringify(sql.exec(`SELECT * FROM "${name}"`).toArray())}`)
      .join("\n");
  });
}

describe("a Cloud API session with good credentials", () => {
  it("is connected at once with Meta's number and name, no QR; D1 records the number, sealed", async () => {
    const { key, accountId } = await createAccount();
    const res = await createSession(key, meta.number);
    expect(res.status, res.text).toBe(201);
    const { session } = res.body;
    expect(res.body.qr_code).toBeNull();
    expect(session).toMatchObject({
      status: "connected",
      gateway: "cloud_api",
      phone_number: "+15555555555",
      display_name: "Jaspers Market",
    });

    const rows = await numberRows();
    expect(rows).toEqual([
      {
        session_id: session.id,
        account_id: accountId,
        phone_number_id: meta.number.phoneNumberId,
        waba_id: WABA_ID,
        access_token_sealed: expect.stringMatching(/^v1\./),
        throughput_mps: 80,
        created_at: expect.any(Number),
      },
    ]);
    // Sealed for this session: it opens with its id, and only with it.
    const sealed = String(rows[0]?.access_token_sealed);
    expect(await openSecret(CREDENTIALS_KEY, session.id, sealed)).toBe(TOKEN);
    await expect(openSecret(CREDENTIALS_KEY, crypto.randomUUID(), sealed)).rejects.toThrow();

    // The token in clear is nowhere: not in any D1 table, not in the session object's storage.
    const d1 = await everyD1Row();
    expect(d1).toContain(sealed);
    expect(d1).not.toContain(TOKEN);
    const stored = await objectStorage(session.id);
    expect(stored).toContain("cloud_api_number");
    expect(stored).toContain(sealed);
    expect(stored).not.toContain(TOKEN);

    // Meta was asked, with the session's token, whether its WABA holds the number.
    expect(meta.graph.calls.map((c) => [c.operation, c.id, c.search])).toEqual([
      [
        "getPhoneNumber",
        meta.number.phoneNumberId,
        "?fields=id,display_phone_number,verified_name,quality_rating,throughput",
      ],
      ["listPhoneNumbers", WABA_ID, "?limit=100"],
    ]);
  });

  it("finds the number on a later page of the WABA's numbers", async () => {
    // The fake's pages hold 25 numbers: 26 more of the WABA put the linked one on page 2.
    for (let i = 0; i < 25; i++) addNumber(meta.graph, { wabaId: WABA_ID, accessToken: TOKEN });
    const last = addNumber(meta.graph, { wabaId: WABA_ID, accessToken: TOKEN });
    const { key } = await createAccount();
    await linkNumber(key, last);
    expect(meta.graph.callsOf("listPhoneNumbers").map((c) => [c.id, c.search])).toEqual([
      [WABA_ID, "?limit=100"],
      [WABA_ID, `?limit=100&after=${encodeURIComponent(templateCursor(24))}`],
    ]);
  });

  it("takes the throughput Meta reports: HIGH → 1,000 messages per second", async () => {
    meta.graph.addNumber({ ...meta.number, throughputLevel: "HIGH" });
    const { key } = await createAccount();
    const id = await linkNumber(key, meta.number);
    expect((await numberRows()).find((row) => row.session_id === id)?.throughput_mps).toBe(1000);
  });
});

describe("Meta refuses the credentials", () => {
  it.each([
    ["a bad token (190)", { access_token: "EAAG-wrong" }, /Invalid OAuth access token/],
    [
      "an unknown number id (100)",
      { phone_number_id: "999999999999" },
      /Object with ID '999999999999' does not exist/,
    ],
  ])(
    "%s → 422 gateway_credentials_invalid with Meta's message; nothing is stored",
    async (_, link, message) => {
      const { key, accountId } = await createAccount();
      const limited = await call("PATCH", `/admin/accounts/${accountId}`, {
        key: ADMIN_TOKEN,
        body: { max_sessions: 1 },
      });
      expect(limited.status).toBe(200);

      const res = await createSession(key, meta.number, link);
      const problem = expectProblem(res, 422, "gateway_credentials_invalid");
      expect(problem.detail).toMatch(message);
      expect(await sessionRows(accountId)).toBe(0);
      expect(await numberRows()).toEqual([]);
      expect(await everyD1Row()).not.toContain("EAAG-wrong");
      expect(await everyD1Row()).not.toContain("999999999999");

      // The account's one slot is free: the right credentials link the number now.
      await linkNumber(key, meta.number);
      expect(await sessionRows(accountId)).toBe(1);
    },
  );
});

describe("a WABA that does not hold the number", () => {
  /** The problem's one field error, the account's session count and the number's D1 rows. */
  async function refused(
    res: Awaited<ReturnType<typeof createSession>>,
    accountId: string,
    phoneNumberId: string,
  ) {
    const problem = expectProblem(res, 422, "gateway_credentials_invalid");
    expect(Object.keys(problem.errors ?? {})).toEqual(["cloud_api.waba_id"]);
    expect(await sessionRows(accountId)).toBe(0);
    for (const d1 of everyAccountD1()) {
      const rows = await d1
        .prepare("SELECT count(*) AS n FROM cloud_api_numbers WHERE phone_number_id = ?")
        .bind(phoneNumberId)
        .first<{ n: number }>();
      expect(rows?.n).toBe(0);
    }
    // Only reads reached Meta: the number, then the WABA's numbers.
    expect(meta.graph.calls.map((c) => [c.operation, c.body])).toEqual([
      ["getPhoneNumber", null],
      ["listPhoneNumbers", null],
    ]);
    expect(meta.graph.sent).toEqual([]);
    return problem;
  }

  it("another business's WABA, which the token may not read → 422 naming cloud_api.waba_id; nothing stored; its template updates stay its own", async () => {
    // The victim's number (of WABA_ID) is linked by its own account.
    const victim = await createAccount();
    await linkNumber(victim.key, meta.number);
    meta.graph.addTemplate({
      wabaId: WABA_ID,
      name: "secret_offer",
      language: "en_US",
      category: "MARKETING",
      components: [{ type: "BODY", text: "Offer" }],
      status: "PENDING",
    });
    meta.graph.calls.length = 0;

    // Another account links its own number (its own WABA and token) under the victim's WABA id.
    const attacker = await createAccount();
    const own = addNumber(meta.graph);
    const res = await createSession(attacker.key, own, { waba_id: WABA_ID });
    const problem = await refused(res, attacker.accountId, own.phoneNumberId);
    expect(problem.errors).toEqual({
      "cloud_api.waba_id": [expect.stringMatching(/Object with ID '102290129340398' does not exist/)],
    });
    expect(meta.graph.callsOf("listPhoneNumbers").map((c) => c.id)).toEqual([WABA_ID]);

    // The victim's template review goes to the victim only.
    meta.graph.setTemplateStatus("secret_offer", "en_US", "REJECTED", "INCORRECT_CATEGORY");
    await deliverWebhooks(meta.graph);
    const eventsOf = async (key: string) =>
      (await call<{ data: unknown[] }>("GET", "/v1/events?filter[type]=template.status_changed", { key }))
        .body.data;
    expect(await eventsOf(victim.key)).toHaveLength(1);
    expect(await eventsOf(attacker.key)).toEqual([]);
  });

  it("a WABA the token reads but that does not list the number → 422 naming cloud_api.waba_id; nothing stored", async () => {
    // The token holds a number of another WABA too: it may read WABA_ID, which does not hold it.
    const elsewhere = addNumber(meta.graph, { accessToken: TOKEN });
    const { key, accountId } = await createAccount();
    const res = await createSession(key, elsewhere, { waba_id: WABA_ID });
    const problem = await refused(res, accountId, elsewhere.phoneNumberId);
    expect(problem.errors).toEqual({
      "cloud_api.waba_id": [
        expect.stringMatching(
          `WhatsApp Business Account ${WABA_ID} does not hold phone number ${elsewhere.phoneNumberId}`,
        ),
      ],
    });

    // Its own WABA links it.
    meta.graph.calls.length = 0;
    await linkNumber(key, elsewhere);
    expect(meta.graph.callsOf("listPhoneNumbers").map((c) => c.id)).toEqual([elsewhere.wabaId]);
  });

  it("a reconnect reads the WABA's numbers again: a number moved to another WABA → 422 naming cloud_api.waba_id", async () => {
    const { key } = await createAccount();
    const id = await linkNumber(key, meta.number);
    expect((await call("PATCH", `/v1/chatapp/sessions/${id}/disconnect`, { key })).status).toBe(200);
    meta.graph.addNumber({ ...meta.number, wabaId: "102290129340399" });
    const res = await call("PATCH", `/v1/chatapp/sessions/${id}/reconnect`, { key });
    const problem = expectProblem(res, 422, "gateway_credentials_invalid");
    expect(Object.keys(problem.errors ?? {})).toEqual(["cloud_api.waba_id"]);
    const shown = await call<{ session: { status: string } }>("GET", `/v1/chatapp/sessions/${id}`, { key });
    expect(shown.body.session.status).toBe("disconnected");
  });

  it("Meta unreachable for the WABA's numbers → 503 gateway_unavailable; nothing stored", async () => {
    meta.graph.dropNext("listPhoneNumbers");
    const { key, accountId } = await createAccount();
    const res = await createSession(key, meta.number);
    expectProblem(res, 503, "gateway_unavailable");
    expect(await sessionRows(accountId)).toBe(0);
    expect(await numberRows()).toEqual([]);
  });
});

describe("the create body", () => {
  it.each([
    ["gateway cloud_api without cloud_api", { gateway: "cloud_api" }, "required with gateway cloud_api"],
    [
      "cloud_api with the sandbox",
      {
        gateway: "sandbox",
        cloud_api: { phone_number_id: "106540352242922", waba_id: WABA_ID, access_token: TOKEN },
      },
      "only with gateway cloud_api",
    ],
    [
      "cloud_api without gateway (the default is the sandbox)",
      { cloud_api: { phone_number_id: "106540352242922", waba_id: WABA_ID, access_token: TOKEN } },
      "only with gateway cloud_api",
    ],
  ])("%s → 422 validation_failed", async (_, body, error) => {
    const { key, accountId } = await createAccount();
    const res = await call("POST", "/v1/chatapp/sessions", { key, body });
    const problem = expectProblem(res, 422, "validation_failed");
    expect(problem.errors).toEqual({ cloud_api: [error] });
    expect(await sessionRows(accountId)).toBe(0);
    expect(meta.graph.calls).toEqual([]);
  });

  it.each([
    ["an id that is not digits", { phone_number_id: "abc" }, "phone_number_id"],
    ["an empty token", { access_token: "" }, "access_token"],
  ])("%s → 422 validation_failed naming the field", async (_, link, field) => {
    const { key } = await createAccount();
    const res = await createSession(key, meta.number, link);
    const problem = expectProblem(res, 422, "validation_failed");
    expect(Object.keys(problem.errors ?? {})).toEqual([`cloud_api.${field}`]);
  });
});

describe("one number, one session", () => {
  it("the same number twice → 409 phone_number_in_use, the second stores nothing; after a delete it links again", async () => {
    const { key, accountId } = await createAccount();
    const first = await linkNumber(key, meta.number);

    const again = await createSession(key, meta.number);
    expectProblem(again, 409, "phone_number_in_use");
    expect(await sessionRows(accountId)).toBe(1);
    expect((await numberRows()).map((row) => row.session_id)).toEqual([first]);

    const deleted = await call("DELETE", `/v1/chatapp/sessions/${first}`, { key });
    expect(deleted.status).toBe(200);
    expect(await numberRows()).toEqual([]);
    const second = await linkNumber(key, meta.number);
    expect((await numberRows()).map((row) => row.session_id)).toEqual([second]);
  });
});

describe("routes a Cloud API session does not have", () => {
  it.each([
    ["GET", "qr-code", undefined],
    ["POST", "pairing-code", { phone_number: "+14155552671" }],
    ["POST", "link-url", {}],
  ])("%s /{id}/%s → 409 not_supported_by_gateway", async (method, path, body) => {
    const { key } = await createAccount();
    const id = await linkNumber(key, meta.number);
    const res = await call(method, `/v1/chatapp/sessions/${id}/${path}`, { key, body });
    expectProblem(res, 409, "not_supported_by_gateway");
  });
});

describe("another account's Cloud API session", () => {
  it("answers 404 to show and delete, and stays", async () => {
    const owner = await createAccount();
    const id = await linkNumber(owner.key, meta.number);
    const other = await createAccount();
    expectProblem(await call("GET", `/v1/chatapp/sessions/${id}`, { key: other.key }), 404, "not_found");
    expectProblem(await call("DELETE", `/v1/chatapp/sessions/${id}`, { key: other.key }), 404, "not_found");
    expect((await numberRows()).map((row) => row.session_id)).toEqual([id]);
    const shown = await call<{ session: { status: string } }>("GET", `/v1/chatapp/sessions/${id}`, {
      key: owner.key,
    });
    expect(shown.body.session.status).toBe("connected");
  });
});

describe("sealed secrets (src/lib/sealed-secret.ts)", () => {
  const context = "0f8fad5b-d9cb-469f-a165-70867728950e";

  it("opens with the key and context it was sealed with, and a fresh nonce each time", async () => {
    const a = await sealSecret(CREDENTIALS_KEY, context, TOKEN);
    const b = await sealSecret(CREDENTIALS_KEY, context, TOKEN);
    expect(a).not.toBe(b);
    expect(a).not.toContain(TOKEN);
    expect(await openSecret(CREDENTIALS_KEY, context, a)).toBe(TOKEN);
  });

  it("throws for another context, another key, an altered ciphertext or an unknown format", async () => {
    const sealed = await sealSecret(CREDENTIALS_KEY, context, TOKEN);
    const otherKey = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
    await expect(openSecret(CREDENTIALS_KEY, "another-session", sealed)).rejects.toThrow();
    await expect(openSecret(otherKey, context, sealed)).rejects.toThrow();
    const [version, nonce, ciphertext = ""] = sealed.split(".");
    const bytes = Uint8Array.from(atob(ciphertext), (c) => c.charCodeAt(0));
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    const altered = `${version}.${nonce}.${btoa(String.fromCharCode(...bytes))}`;
    await expect(openSecret(CREDENTIALS_KEY, context, altered)).rejects.toThrow();
    await expect(openSecret(CREDENTIALS_KEY, context, `v2.${nonce}.${ciphertext}`)).rejects.toThrow(
      /unknown format/,
    );
  });
});
