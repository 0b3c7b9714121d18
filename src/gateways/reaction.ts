import type { LookupResult, SentQuery } from "./gateway";

/**
 * What a lookup answers for a reaction whose send's outcome is unknown, on a gateway that cannot
 * list reactions (WAHA and Evolution API list messages, not the reactions set on them): `absent`,
 * so the reaction is sent again, once more, under the same message. Sending it again is safe: a
 * reaction is a state, not a message in the chat. WhatsApp keeps one reaction per person on a
 * message, each new one replacing the last and an empty one taking it off (WAHA's
 * `MessageReactionRequest.reaction`: "Emoji to react with. Send an empty string to remove the
 * reaction"; Baileys' `react` message, which WAHA and Evolution API's `sendReaction` send; Meta's
 * Cloud API reference, "Reaction messages"), so the same emoji set twice leaves the message as
 * one send would. Null for a message that is not a reaction: the gateway's own lookup answers.
 */
export function reactionLookup(query: SentQuery): LookupResult | null {
  return query.type === "reaction" ? { result: "absent" } : null;
}
