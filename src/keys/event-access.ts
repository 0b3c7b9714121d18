import { EVENT_READ_SCOPE, EVENT_TYPES, type EventType } from "../events/catalogue";
import { grants, insufficientScope, type Scope } from "./scopes";

// Which events a key may read. An event carries its object whole (a message with its text, a
// session's QR code, a one-time code), so reading it takes the scope that reads the object
// (src/events/catalogue.ts, EVENT_READ_SCOPE), besides `events:read` or `webhooks:write` for the
// route itself.

/** The scope that reads events of `type`; a type not in the catalogue takes `*`. */
function readScopeOf(type: string): Scope {
  return (EVENT_READ_SCOPE as Partial<Record<string, Scope>>)[type] ?? "*";
}

/** Whether a key holding `held` may read events of `type`. */
export function canReadEvent(held: readonly Scope[], type: string): boolean {
  return grants(held, readScopeOf(type));
}

/** The event types a key holding `held` may read, in catalogue order. */
export function readableEventTypes(held: readonly Scope[]): EventType[] {
  return EVENT_TYPES.filter((type) => canReadEvent(held, type));
}

/**
 * 403 `insufficient_scope` when a key holding `held` may not read one of `types`, naming the first
 * such type and the scope it needs ({@link insufficientScope}). `why` (a sentence with a leading space) ends
 * the detail.
 */
export function assertCanReadEvents(held: readonly Scope[], types: readonly string[], why = ""): void {
  const type = types.find((t) => !canReadEvent(held, t));
  if (type === undefined) return;
  const scope = readScopeOf(type);
  throw insufficientScope(
    scope,
    `This API key lacks the \`${scope}\` scope that \`${type}\` events need: they carry what \`${scope}\` reads.${why}`,
  );
}

/**
 * The event types a webhook endpoint gets when a key holding `held` sets its `events` to `asked`
 * (null: every type). A key subscribes an endpoint only to what it may read itself:
 * - a list naming a type the key may not read is 403 `insufficient_scope` ({@link assertCanReadEvents});
 * - every type stays `null` (every type, including types added later) only for a `*` key; any
 *   other key gets the list of the types it may read now (empty when it may read none), stored
 *   as the endpoint's `events`, which is all that delivery then fans out to it.
 */
export function subscribableEvents(held: readonly Scope[], asked: EventType[] | null): EventType[] | null {
  if (asked !== null) {
    assertCanReadEvents(held, asked, " A key subscribes an endpoint only to events it may read.");
    return asked;
  }
  return held.includes("*") ? null : readableEventTypes(held);
}

/**
 * 403 `insufficient_scope` unless a key holding `held` may read every type an endpoint subscribed
 * to `events` receives (null: every type, including types added later, which only `*` reads): the
 * check before the key points the endpoint at another `url`, which would send those events where
 * the key chooses.
 */
export function assertCanRedirectEndpoint(held: readonly Scope[], events: readonly string[] | null): void {
  const why =
    " The endpoint receives them: a key moves an endpoint to another URL only if it may read everything the endpoint receives.";
  assertCanReadEvents(held, events ?? EVENT_TYPES, why);
  if (events === null && !held.includes("*"))
    throw insufficientScope(
      "*",
      `This endpoint receives every event type, including types added later, which only a \`*\` key reads.${why}`,
    );
}
