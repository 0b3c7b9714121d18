import type { ContactCard } from "./contact-cards";
import type { InteractiveReply } from "./interactive";
import type { Location } from "./location";

/**
 * The object a structured message carries beside its `content`, under the key named after its
 * type, as Meta's message object has it (`location: { latitude, longitude, name, address }`;
 * Meta's OpenAPI document, `Message`). A message stores it in its `metadata` under the same key
 * (src/messages/metadata.ts); an incoming one gets it from its gateway's event (GatewayEvent
 * `incoming`), an outgoing one from the send (src/messages/send.ts).
 */
export interface MessagePayload {
  /** A `location` message's point and place (lib/location.ts). */
  location?: Location;
  /** An `interactive_reply`'s tap: the button or row chosen (lib/interactive.ts). */
  interactive_reply?: InteractiveReply;
  /** A `contacts` message's cards (lib/contact-cards.ts). */
  contacts?: ContactCard[];
}
