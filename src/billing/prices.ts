import type { Config } from "../config";
import type { MessageType } from "../db/schema";

/** The types a message can be sent as: all but `interactive_reply`, a contact's tap alone. */
export type SendableType = Exclude<MessageType, "interactive_reply">;

/**
 * Price of one message of each type, in minor units (the `PRICE_*` variables, docs/configuration.md,
 * Overview); a reaction costs a text (docs/messages.md, Replies and reactions).
 */
export function pricesOf(config: Config): Record<SendableType, number> {
  return {
    text: config.PRICE_TEXT,
    image: config.PRICE_IMAGE,
    video: config.PRICE_VIDEO,
    audio: config.PRICE_AUDIO,
    document: config.PRICE_DOCUMENT,
    template: config.PRICE_TEMPLATE,
    reaction: config.PRICE_TEXT,
    location: config.PRICE_LOCATION,
    interactive: config.PRICE_INTERACTIVE,
    contacts: config.PRICE_CONTACTS,
    sticker: config.PRICE_STICKER,
    poll: config.PRICE_POLL,
  };
}

/** The configured price of one message of `type`, in minor units. */
export function priceOf(config: Config, type: SendableType): number {
  return pricesOf(config)[type];
}
