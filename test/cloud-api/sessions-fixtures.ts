import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, expect } from "vitest";
import type { FakeGraph, FakeNumber } from "../../fakes/cloud-api/graph.ts";
import { call, type SessionEnvelope, sessionStub } from "../helpers";
import { deliverWebhooks, useFakeGraph } from "./webhooks-fixtures";

/*
 * Business numbers and their sessions on the shared fake Graph API (fakes/cloud-api/graph.ts,
 * installed per test by webhooks-fixtures.ts `useFakeGraph`), and what the session tests read of
 * the session object.
 */

/** The business number's display form of {@link addNumber}; webhooks and the session's phone_number use its digits. */
export const DISPLAY_NUMBER = "+1 555 010 0001";
/** The WABA and token of {@link exampleNumber}. */
export const WABA_ID = "102290129340398";
export const TOKEN = "EAAG-good-token-4e7c1b9a";

let numbers = 0;

/**
 * Adds a business number of its own to `graph`: a phone_number_id no earlier test of the file used
 * (D1 keeps their rows, and the id is unique there), a WABA and a token of its own, the display
 * number {@link DISPLAY_NUMBER}, named "Shop"; `overrides` replace any of these.
 */
export function addNumber(graph: FakeGraph, overrides: Partial<FakeNumber> = {}): FakeNumber {
  numbers += 1;
  const phoneNumberId = String(200_000_000_000_000 + numbers * 1000 + Math.floor(Math.random() * 1000));
  const number: FakeNumber = {
    phoneNumberId,
    wabaId: String(300_000_000_000_000 + numbers),
    displayPhoneNumber: DISPLAY_NUMBER,
    verifiedName: "Shop",
    accessToken: `token-${phoneNumberId}`,
    ...overrides,
  };
  graph.addNumber(number);
  return number;
}

/**
 * A number of Meta's examples ("+1 555-555-5555", "Jaspers Market"), of WABA {@link WABA_ID},
 * with token {@link TOKEN}, at the STANDARD throughput unless said otherwise.
 */
export function exampleNumber(graph: FakeGraph, overrides: Partial<FakeNumber> = {}): FakeNumber {
  return addNumber(graph, {
    displayPhoneNumber: "+1 555-555-5555",
    verifiedName: "Jaspers Market",
    wabaId: WABA_ID,
    accessToken: TOKEN,
    ...overrides,
  });
}

/**
 * A fresh fake Graph API on the test network for every test (webhooks-fixtures.ts
 * `useFakeGraph`), with a number of Meta's examples ({@link exampleNumber}) on it. The holder's
 * `graph` and `number` are the current test's.
 */
export function useExampleNumber(): { graph: FakeGraph; number: FakeNumber } {
  const fake = useFakeGraph();
  const first = fake();
  const holder = { graph: first, number: exampleNumber(first) };
  beforeEach(() => {
    holder.graph = fake();
    holder.number = exampleNumber(holder.graph);
  });
  return holder;
}

/** POST /v1/chatapp/sessions for Cloud API number `number`; `link` replaces any of its credentials. */
export function createSession(
  key: string,
  number: FakeNumber,
  link: Partial<{ phone_number_id: string; waba_id: string; access_token: string }> = {},
) {
  const cloud_api = {
    phone_number_id: number.phoneNumberId,
    waba_id: number.wabaId,
    access_token: number.accessToken,
    ...link,
  };
  return call<SessionEnvelope & { qr_code: string | null }>("POST", "/v1/chatapp/sessions", {
    key,
    body: { gateway: "cloud_api", cloud_api },
  });
}

/** Creates a connected Cloud API session on `number`. @returns its id. */
export async function linkNumber(key: string, number: FakeNumber): Promise<string> {
  const res = await createSession(key, number);
  expect(res.status, res.text).toBe(201);
  expect(res.body.session.status).toBe("connected");
  return res.body.session.id;
}

/** A number of its own ({@link addNumber}, with `overrides`) and its connected session. */
export async function cloudApiSession(graph: FakeGraph, key: string, overrides: Partial<FakeNumber> = {}) {
  const number = addNumber(graph, overrides);
  const id = await linkNumber(key, number);
  return { id, phoneNumberId: number.phoneNumberId, wabaId: number.wabaId };
}

/**
 * Each of `contacts` (E.164) writes to number `phoneNumberId`: Meta's signed incoming text webhook
 * each, posted at once, so the 24-hour customer service window is open and a text may be sent to
 * them (README, "The 24-hour customer service window"). Throws when other webhooks were queued.
 */
export async function openWindow(graph: FakeGraph, phoneNumberId: string, contacts: string[]): Promise<void> {
  for (const contact of contacts) {
    graph.queueIncoming({ phoneNumberId, from: contact, text: "Hi", profileName: "Customer" });
  }
  const posted = await deliverWebhooks(graph);
  expect(posted.map((hook) => hook.res.body)).toEqual(
    contacts.map(() => ({ success: true, ignored: false })),
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
