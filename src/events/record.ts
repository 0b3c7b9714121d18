import {
  eventForAccount as accountEvent,
  eventsForRows as rowsEvents,
  eventsForRowsAs as rowsEventsAs,
} from "../db/queries/events";
import type { EventType } from "./catalogue";

// The statements that record events live in src/db/queries/events.ts (every D1 statement lives
// in src/db/). They go into the D1 batch of the change they record (a transactional outbox);
// these are the same builders with the event type checked against the catalogue.

/** A row-event statement builder, typed by the catalogue's event types. */
type OfEventType<F> = F extends (type: string, ...rest: infer R) => infer S
  ? (type: EventType, ...rest: R) => S
  : never;

/** src/db/queries/events.ts `eventsForRows`, for a catalogue event type. */
export const eventsForRows: OfEventType<typeof rowsEvents> = rowsEvents;

/** src/db/queries/events.ts `eventsForRowsAs`, for a catalogue event type. */
export const eventsForRowsAs: OfEventType<typeof rowsEventsAs> = rowsEventsAs;

/** src/db/queries/events.ts `eventForAccount`, for a catalogue event type. */
export const eventForAccount: OfEventType<typeof accountEvent> = accountEvent;

export { insertEventStatement, insertKeyedEventStatement } from "../db/queries/events";

/** An event made outside D1 (by a session object), with its own id as its dedupe key. */
export interface PendingEvent {
  id: string;
  accountId: string;
  type: EventType;
  /** JSON, as {@link eventsForRows} stores it. */
  snapshot: string;
  /** Epoch ms. */
  createdAt: number;
}

/** A new {@link PendingEvent} id: `evt_` and 32 hex digits, like the ones SQLite makes. */
export function newEventId(): string {
  return `evt_${crypto.randomUUID().replaceAll("-", "")}`;
}

/**
 * An event a batch recorded, as its event statement's `RETURNING` gives it (the statements
 * above return the events they wrote, none for a change already recorded).
 */
export interface RecordedEvent {
  id: string;
  accountId: string;
}

/**
 * The events a D1 batch recorded that have somewhere to go: the `RETURNING` rows of its event
 * statements at `indexes`, for accounts with an enabled webhook endpoint. (An endpoint enabled
 * later receives only events recorded after it, see src/events/sweep.ts.)
 */
export function recordedIn(results: D1Result[], indexes: number[]): RecordedEvent[] {
  return indexes.flatMap((index) =>
    ((results[index]?.results ?? []) as (RecordedEvent & { hooked: number })[])
      .filter((row) => row.hooked === 1)
      .map(({ id, accountId }) => ({ id, accountId })),
  );
}

/** How long events are kept (30 days); the hourly sweep deletes older ones. */
export const EVENT_RETENTION_MS = 30 * 24 * 3600 * 1000;
