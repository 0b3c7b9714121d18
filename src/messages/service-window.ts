import type { GatewayKind } from "../config";
import type { Db } from "../db/client";
import { lastMessageOf } from "../db/queries/contacts";
import { ApiError } from "../errors";
import { capabilitiesOf } from "../lib/gateway-kinds";

/**
 * The customer service window: a business number on Meta's WhatsApp Cloud API may send a
 * free-form message (anything but a template) to a contact only within 24 hours of the contact's
 * last message to it (Meta's "Customer service windows" page; outside it Meta refuses the send
 * with error 131047). In ms.
 */
export const SERVICE_WINDOW_MS = 24 * 3_600_000;

/** Whether sessions on `gateway` have a service window (lib/gateway-kinds.ts `needsServiceWindow`). */
export const hasServiceWindow = (gateway: GatewayKind): boolean => capabilitiesOf(gateway).needsServiceWindow;

/** Whether a message of `type` may be sent outside the window (a template alone). */
export const allowedOutsideWindow = (type: string): boolean => OUTSIDE_ALLOWED.has(type);

/** Message types a window does not limit: templates, the only messages Meta lets open a conversation. */
const OUTSIDE_ALLOWED: ReadonlySet<string> = new Set(["template"]);

/**
 * The recipients of a send on session `sessionId` (gateway `gateway`) who are outside its service
 * window at `now` (epoch ms): those who never wrote to the session, or last wrote more than
 * {@link SERVICE_WINDOW_MS} before. Empty for a gateway without a window and for a template.
 */
export async function outsideServiceWindow(
  db: Db,
  send: { sessionId: string; gateway: GatewayKind; type: string; recipients: string[] },
  now: number,
): Promise<string[]> {
  if (!hasServiceWindow(send.gateway) || OUTSIDE_ALLOWED.has(send.type)) return [];
  const last = await lastMessageOf(db, send.sessionId, send.recipients);
  return send.recipients.filter((to) => (last.get(to) ?? Number.NEGATIVE_INFINITY) < now - SERVICE_WINDOW_MS);
}

/**
 * Refuses a send any of whose recipients is outside the session's service window
 * ({@link outsideServiceWindow}): the whole send, before anything is charged or written.
 * @throws ApiError `outside_service_window` (422) with the numbers outside as extension member
 *   `outside` (their addresses, numbers or user ids, in the request's order).
 */
export async function requireServiceWindow(
  db: Db,
  send: Parameters<typeof outsideServiceWindow>[1],
  now: number,
): Promise<void> {
  const outside = await outsideServiceWindow(db, send, now);
  if (outside.length === 0) return;
  throw new ApiError(
    "outside_service_window",
    `${outside.length} of ${send.recipients.length} recipients have not written to this session in the last 24 hours; outside the customer service window only a template may be sent.`,
    { extra: { outside } },
  );
}
