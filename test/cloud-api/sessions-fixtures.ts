import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeEach, expect } from "vitest";
import type { FakeGraph, FakeNumber } from "../../fakes/cloud-api/graph.ts";
import { everyTable } from "../databases";
import { sessionStub } from "../helpers";
import { addNumber, deliverWebhooks, useFakeGraph } from "./webhooks-fixtures";

/*
 * What the session tests share beyond webhooks-fixtures.ts (the fake Graph API, numbers and
 * sessions on it): a number of Meta's examples, the 24-hour window opened as a customer opens it,
 * the session object's clock and outbox, and D1 read whole.
 */

/** The WABA and token of {@link exampleNumber}. */
export const WABA_ID = "102290129340398";
export const TOKEN = "EAAG-good-token-4e7c1b9a";

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

/**
 * Each of `contacts` (E.164) writes to number `phoneNumberId`: Meta's signed incoming text webhook
 * each, posted at once, so the 24-hour customer service window is open and a text may be sent to
 * them (docs/gateways.md, "The 24-hour customer service window"). Throws when other webhooks were queued.
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

/**
 * Every row of every D1 table, as JSON text (to look for a secret in clear): the directory's and
 * every account database's, since a secret must be in clear in neither.
 */
export async function everyD1Row(): Promise<string> {
  return (await everyTable()).map(({ name, rows }) => `${name}: ${rows}`).join("\n");
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
