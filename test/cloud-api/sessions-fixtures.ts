import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { delay, HttpResponse, http } from "msw";
import { expect } from "vitest";
import { CLOUD_API_BASE_URL, GATEWAY_TIMEOUT_MS } from "../gateway-config";
import { call, type SessionEnvelope, sessionStub } from "../helpers";
import { network } from "../network";
import { messagesChange, postWebhook } from "./webhooks-fixtures";

/*
 * A small stand-in for Meta's Graph API (`CLOUD_API_BASE_URL`, version v23.0) for the sessions,
 * credentials, sends, pacing and settle tests of this folder, answering with the shapes of Meta's
 * OpenAPI document (facebook/openapi, business-messaging-api_v23.0.yaml): `PhoneNumberInfo` for
 * `GET /{Phone-Number-ID}`, the `sendMessage` response, and `GraphAPIError` bodies for refusals
 * (codes from Meta's "Error codes" page). The shared FakeGraph (fakes/cloud-api/graph.ts) replaces
 * it once it lands.
 */

export const VERSION_URL = `${CLOUD_API_BASE_URL}/v23.0`;
export const WABA_ID = "102290129340398";
export const TOKEN = "EAAG-good-token-4e7c1b9a";

/** A business number the fake knows, with the token it takes. */
export interface FakeNumber {
  token: string;
  display_phone_number: string;
  verified_name: string;
  quality_rating: string;
  throughput: "STANDARD" | "HIGH" | "NOT_APPLICABLE";
}

/** A send the fake took: its body, the token it came with, and when it arrived (epoch ms). */
export interface GraphSend {
  phoneNumberId: string;
  body: Record<string, unknown>;
  at: number;
  wamid: string | null;
}

/**
 * How the next send is answered, instead of accepting it: Meta's error `code` with its HTTP
 * `status` (the message is not stored), or `hang` (no answer within the gateway's timeout; the
 * message is not stored either: whether Meta took it cannot be told).
 */
export type SendFault = { code: number; status: number; message?: string } | "hang";

/**
 * The fake Graph API, installed on the test's network. Each instance has a number of its own
 * ({@link phoneNumberId}, random digits: D1 keeps the numbers of earlier tests of a file).
 */
export class FakeGraph {
  readonly phoneNumberId = String(100_000_000_000_000 + Math.floor(Math.random() * 899_999_999_999_999));
  readonly numbers = new Map<string, FakeNumber>();
  readonly sent: GraphSend[] = [];
  /** Faults of the next sends, in order (each answers one send). */
  readonly faults: SendFault[] = [];
  private counter = 0;

  constructor() {
    this.numbers.set(this.phoneNumberId, {
      token: TOKEN,
      display_phone_number: "+1 555-555-5555",
      verified_name: "Jaspers Market",
      quality_rating: "GREEN",
      throughput: "STANDARD",
    });
  }

  install(): this {
    network.use(
      http.get(`${VERSION_URL}/:id`, ({ request, params }) => {
        const refused = this.refusal(request, String(params.id));
        if (refused) return refused;
        const n = this.numbers.get(String(params.id));
        return HttpResponse.json({
          id: params.id,
          display_phone_number: n?.display_phone_number,
          verified_name: n?.verified_name,
          quality_rating: n?.quality_rating,
          throughput: { level: n?.throughput },
        });
      }),
      http.post(`${VERSION_URL}/:id/messages`, async ({ request, params }) => {
        const refused = this.refusal(request, String(params.id));
        const body = (await request.json()) as Record<string, unknown>;
        const at = Date.now();
        if (refused) {
          this.sent.push({ phoneNumberId: String(params.id), body, at, wamid: null });
          return refused;
        }
        const fault = this.faults.shift();
        if (fault === "hang") {
          this.sent.push({ phoneNumberId: String(params.id), body, at, wamid: null });
          await delay(GATEWAY_TIMEOUT_MS * 3);
          return HttpResponse.json(
            { error: { message: "late", code: 1, type: "OAuthException" } },
            { status: 500 },
          );
        }
        if (fault) {
          this.sent.push({ phoneNumberId: String(params.id), body, at, wamid: null });
          return graphError(fault.status, fault.code, fault.message ?? `error ${fault.code}`);
        }
        const wamid = `wamid.HBgL${++this.counter}${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
        this.sent.push({ phoneNumberId: String(params.id), body, at, wamid });
        return HttpResponse.json({
          messaging_product: "whatsapp",
          contacts: [{ input: body.to, wa_id: body.to }],
          messages: [{ id: wamid }],
        });
      }),
    );
    return this;
  }

  /** The fake's own number. */
  get number(): FakeNumber {
    const number = this.numbers.get(this.phoneNumberId);
    if (!number) throw new Error("the fake's number was removed");
    return number;
  }

  /** POST /v1/chatapp/sessions for a Cloud API number (defaults: this fake's number and token). */
  createSession(
    key: string,
    link: Partial<{ phone_number_id: string; waba_id: string; access_token: string }> = {},
  ) {
    return call<SessionEnvelope & { qr_code: string | null }>("POST", "/v1/chatapp/sessions", {
      key,
      body: {
        gateway: "cloud_api",
        cloud_api: { phone_number_id: this.phoneNumberId, waba_id: WABA_ID, access_token: TOKEN, ...link },
      },
    });
  }

  /** Creates a connected Cloud API session on this fake's number. @returns its id. */
  async session(key: string): Promise<string> {
    const res = await this.createSession(key);
    expect(res.status, res.text).toBe(201);
    expect(res.body.session.status).toBe("connected");
    return res.body.session.id;
  }

  /**
   * Each of `contacts` (E.164) writes to this number: a signed incoming text webhook each, so the
   * 24-hour customer service window is open and a text may be sent to them (README, "The 24-hour
   * customer service window").
   */
  async openWindow(contacts: string[]): Promise<void> {
    for (const contact of contacts) {
      const from = contact.replace(/^\+/, "");
      const change = messagesChange(this.phoneNumberId, {
        contacts: [{ profile: { name: "Customer" }, wa_id: from }],
        messages: [
          {
            from,
            id: `wamid.window-${crypto.randomUUID()}`,
            timestamp: String(Math.floor(Date.now() / 1000)),
            type: "text",
            text: { body: "Hi" },
          },
        ],
      });
      const res = await postWebhook(change);
      expect(res.body, res.text).toEqual({ success: true, ignored: false });
    }
  }

  /** The sends of message `id` (by `biz_opaque_callback_data`). */
  sendsOf(id: string): GraphSend[] {
    return this.sent.filter((send) => send.body.biz_opaque_callback_data === id);
  }

  /**
   * Meta's refusal of a call: a token no number takes → 190 (Meta checks the token first); a
   * number that does not exist or that this token may not use → 100. Null when the call may go on.
   */
  private refusal(request: { headers: Headers }, id: string): Response | null {
    const token = request.headers.get("authorization")?.replace(/^Bearer /, "");
    if (![...this.numbers.values()].some((n) => n.token === token))
      return graphError(401, 190, "Invalid OAuth access token - Cannot parse access token");
    if (this.numbers.get(id)?.token !== token)
      return graphError(
        400,
        100,
        `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
      );
    return null;
  }
}

/** A `GraphAPIError` body as Meta answers it. */
export function graphError(status: number, code: number, message: string): Response {
  return HttpResponse.json(
    { error: { message, type: "OAuthException", code, fbtrace_id: "AbCdEfGhIjK" } },
    { status },
  );
}

/** Every row of every D1 table, as JSON text (to look for a secret in clear). */
export async function everyD1Row(): Promise<string> {
  const tables = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
  ).all<{ name: string }>();
  const dumps: string[] = [];
  for (const { name } of tables.results) {
    const rows = await env.DB.prepare(`SELECT * FROM "${name}"`).all();
    dumps.push(`${name}: ${JSON.stringify(rows.results)}`);
  }
  return dumps.join("\n");
}

/**
 * Runs session `id`'s alarm as if the clock read `at` (epoch ms): the alarm counts as armed for
 * `at`, so every deadline due by then runs and the dispatcher's logical now is `at`
 * (src/sessions/deadlines.ts `takeDue`). How a test lets minutes pass without waiting for them.
 */
export async function alarmAt(id: string, at: number): Promise<void> {
  await runInDurableObject(sessionStub(id), async (_instance, state) => {
    state.storage.sql.exec("INSERT OR REPLACE INTO alarm_state (id, armed_for) VALUES (1, ?)", at);
    await state.storage.setAlarm(at);
  });
  await runDurableObjectAlarm(sessionStub(id));
}

/** Session `id`'s outbox entry for message `messageId`, as its object holds it. */
export function outboxEntry(
  id: string,
  messageId: string,
): Promise<
  { state: string; attempts: number; first_attempt_at: number; next_attempt_at: number } | undefined
> {
  return runInDurableObject(
    sessionStub(id),
    (_instance, state) =>
      state.storage.sql
        .exec<{ state: string; attempts: number; first_attempt_at: number; next_attempt_at: number }>(
          "SELECT state, attempts, first_attempt_at, next_attempt_at FROM outbox WHERE id = ?",
          messageId,
        )
        .toArray()[0],
  );
}
