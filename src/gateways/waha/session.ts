import { z } from "zod";
import type { GatewayEvent } from "../gateway";
import { phoneOfJid } from "../jid";

/*
 * A WAHA session as WAHA's docs describe it (https://waha.devlike.pro/docs/how-to/sessions/): its
 * status values and linked account, and what a status means as a GatewayEvent. Shared by the
 * lifecycle calls (link.ts), which read a session, and the webhook parser (events.ts), which is
 * told of its changes, so a status means the same on both paths.
 */

/** Session status values ("Sessions → Session Status"). */
export const SessionStatus = z.enum(["STOPPED", "STARTING", "SCAN_QR_CODE", "WORKING", "FAILED"]);
/** One of the {@link SessionStatus} values. */
export type SessionStatus = z.output<typeof SessionStatus>;

/** The linked account, `{ id: "<digits>@c.us", pushName }` ("Sessions → Get me"); null until WORKING. */
export const Me = z.looseObject({ id: z.string(), pushName: z.string().nullish() });
/** A session's linked account as {@link Me} parses it. */
export type Me = z.output<typeof Me>;

/**
 * A session status as the event it means, `at` in epoch ms: SCAN_QR_CODE → `qr` without a
 * payload (fetch it with `currentQr`); WORKING → `linked` with the account of `me`; FAILED →
 * `failed` `gateway_failed`; STOPPED → `dropped` `gateway_stopped`, not logged out. Null for
 * STARTING and for WORKING without a phone number in `me` ("Sessions → Session Status").
 */
export function statusEvent(
  status: SessionStatus,
  me: Me | null | undefined,
  at: number,
): GatewayEvent | null {
  switch (status) {
    case "SCAN_QR_CODE":
      return { type: "qr", qr: null, at };
    case "WORKING": {
      const account = accountOf(me);
      return account && { type: "linked", ...account, at };
    }
    case "FAILED":
      return { type: "failed", reason: "gateway_failed", at };
    case "STOPPED":
      return { type: "dropped", reason: "gateway_stopped", loggedOut: false, at };
    case "STARTING":
      return null;
  }
}

/**
 * The linked phone (E.164) and display name (`pushName`) of a session's `me`, or null without a
 * phone number (no `me`, or an id that is not `<digits>@c.us`).
 */
export function accountOf(
  me: Me | null | undefined,
): { phoneNumber: string; displayName: string | null } | null {
  const phoneNumber = me ? phoneOfJid(me.id) : null;
  return me && phoneNumber ? { phoneNumber, displayName: me.pushName ?? null } : null;
}
