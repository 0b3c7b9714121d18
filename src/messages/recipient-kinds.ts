import type { GatewayKind } from "../config";
import { ApiError } from "../errors";
import { userIdKind } from "../lib/contact-identity";
import { capabilitiesOf, USER_ID_KINDS, type UserIdKind } from "../lib/gateway-kinds";
import { needsPhoneNumber } from "./template";

/*
 * Which recipients known by a user id a send can reach (docs/contacts.md, Contacts): a gateway sends to the
 * kinds it declares (lib/gateway-kinds.ts `sendsToUserIds`), and Meta sends an authentication
 * template with a code button to phone numbers only. A single send (messages/send.ts) and a
 * campaign (campaigns/recipient-kinds.ts) refuse the others the same way, before anything is
 * charged or stored.
 */

/**
 * The kinds of user id a send cannot go to, each with why (a sentence without its full stop, for
 * the refusal's `detail`). Phone numbers are never refused here.
 */
export type UserIdRefusals = ReadonlyMap<UserIdKind, string>;

/**
 * The kinds of user id gateway `gateway` cannot send to (`sendsToUserIds`), each with why; `who`
 * names the sender in that sentence (default: "The session's gateway").
 */
export function gatewayRefusals(gateway: GatewayKind, who = "The session's gateway"): UserIdRefusals {
  const sendsTo: readonly UserIdKind[] = capabilitiesOf(gateway).sendsToUserIds;
  const reach =
    sendsTo.length > 0 ? `phone numbers and ${sendsTo.join(" and ")} user ids` : "phone numbers only";
  const why = `${who} (${gateway}) sends to ${reach}`;
  return new Map(USER_ID_KINDS.filter((kind) => !sendsTo.includes(kind)).map((kind) => [kind, why]));
}

/**
 * The kinds of user id template `template` (a stored template row: name, category and components
 * JSON) cannot be sent to: business-scoped user ids for an authentication template with a code
 * button (messages/template.ts `needsPhoneNumber`; Meta answers such a send with error 131062).
 */
export function templateRefusals(template: {
  name: string;
  category: string;
  components: string;
}): UserIdRefusals {
  if (!needsPhoneNumber(template)) return new Map();
  return new Map([
    [
      "bsuid",
      `Template ${template.name} is an authentication template with a code button, which Meta sends to phone numbers only (error 131062)`,
    ],
  ]);
}

/** All of `refusals`, in order; the first reason given for a kind is kept. */
export function mergeRefusals(...refusals: UserIdRefusals[]): UserIdRefusals {
  const merged = new Map<UserIdKind, string>();
  for (const each of refusals) for (const [kind, why] of each) if (!merged.has(kind)) merged.set(kind, why);
  return merged;
}

/** Of `addresses` (numbers and user ids), the user ids of a kind `refusals` refuses, in order. */
export function refusedAmong(refusals: UserIdRefusals, addresses: readonly string[]): string[] {
  if (refusals.size === 0) return [];
  return addresses.filter((address) => {
    const kind = userIdKind(address);
    return kind !== null && refusals.has(kind);
  });
}

/**
 * The refusal of recipients `refused` (user ids of kinds `refusals` refuses), as
 * {@link requireSupportedRecipients} throws it. With `count` (how many are refused in all, when
 * `refused` lists only the first of them) the problem also carries `refused_count`.
 */
export function recipientNotSupported(refusals: UserIdRefusals, refused: string[], count?: number): ApiError {
  const kinds = new Set(refused.map(userIdKind));
  const why = [...refusals].filter(([kind]) => kinds.has(kind)).map(([, reason]) => reason);
  const more = count !== undefined && count > refused.length ? ` and ${count - refused.length} more` : "";
  return new ApiError(
    "recipient_not_supported",
    `${why.join("; ")}. Refused: ${refused.join(", ")}${more}.`,
    { extra: count === undefined ? { recipients: refused } : { recipients: refused, refused_count: count } },
  );
}

/**
 * Refuses a send to any recipient whose kind of user id `refusals` refuses, before anything is
 * charged or stored.
 * @throws ApiError `recipient_not_supported` (422) with extension member `recipients`, those
 *   refused (in the order of `addresses`).
 */
export function requireSupportedRecipients(refusals: UserIdRefusals, addresses: readonly string[]): void {
  const refused = refusedAmong(refusals, addresses);
  if (refused.length > 0) throw recipientNotSupported(refusals, refused);
}
