import type { GatewayKind } from "../config";
import { ApiError } from "../errors";
import { capabilitiesOf } from "../lib/gateway-kinds";
import type { Interactive } from "../lib/interactive";
import type { Poll } from "../lib/poll";
import type { SendableType } from "./types";

/**
 * Refuses a message the session's gateway cannot send at all, before anything is fetched or
 * charged (docs/messages.md, Sending messages): a sticker where the gateway has no sticker message
 * (lib/gateway-kinds.ts `sendsStickers`; WAHA's API has none), or an interactive message of a kind
 * it does not send (`sendsInteractive`: reply buttons on WAHA), or a poll where the gateway has
 * none (`sendsPolls`: the Cloud API) or with more options than it takes (`maxPollOptions`: 10 on
 * Evolution API). A send checks its session's gateway; a campaign each of its sessions'.
 * @throws ApiError `type_not_supported_by_gateway` (422) naming `type`, `interactive.type` or
 *   `poll.options`.
 */
export function requireGatewaySends(
  gateway: GatewayKind,
  message: {
    type: SendableType;
    interactive?: Pick<Interactive, "type"> | null;
    poll?: Pick<Poll, "options"> | null;
  },
): void {
  const capabilities = capabilitiesOf(gateway);
  const refused = (what: string, field: string, words = `not sent by the ${gateway} gateway`) =>
    new ApiError("type_not_supported_by_gateway", `The session's gateway (${gateway}) ${what}.`, {
      fields: { [field]: [words] },
    });
  if (message.type === "sticker" && !capabilities.sendsStickers)
    throw refused("does not send stickers", "type");
  if (message.type === "poll" && !capabilities.sendsPolls) throw refused("does not send polls", "type");
  const options = message.type === "poll" ? (message.poll?.options.length ?? 0) : 0;
  if (options > capabilities.maxPollOptions)
    throw refused(
      `sends polls of at most ${capabilities.maxPollOptions} options`,
      "poll.options",
      `at most ${capabilities.maxPollOptions} on the ${gateway} gateway`,
    );
  const kind = message.type === "interactive" ? message.interactive?.type : undefined;
  if (kind && !capabilities.sendsInteractive.includes(kind))
    throw refused(`does not send interactive ${kind} messages`, "interactive.type");
}
