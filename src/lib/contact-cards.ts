import { z } from "zod";

/*
 * Contact cards (docs/messages.md, Sending messages → Contact cards): people's names, numbers, addresses
 * and workplaces, in the shape of the Cloud API's `contacts` message (Meta's OpenAPI document,
 * `ContactsMessage.contacts` of `ContactObject` for a send, `ContactSharingMessage` of
 * `ContactObject_1` for a received one). One shape serves every gateway: the Cloud API sends it
 * as it is; linked-device gateways send and receive it as vCards (lib/vcard.ts).
 */

/** Most cards in one message (`ContactsMessage.contacts.maxItems`). */
export const MAX_CONTACT_CARDS = 5;
/** Most phones, emails or URLs on one card: this API's limit (Meta states none). */
export const MAX_CARD_ENTRIES = 10;
/** Longest name part, company, department or title, in characters: this API's limit. */
export const MAX_CARD_TEXT = 256;

/** The kind of a phone, email or URL a send takes (`PhoneObject.type`, `EmailObject.type`, `UrlObject.type`). */
const EntryType = z.enum(["HOME", "WORK"]).optional().describe("`HOME` or `WORK`.");

const cardText = (meaning: string) => z.string().min(1).max(MAX_CARD_TEXT).describe(meaning);

const NameSchema = z.strictObject({
  formatted_name: cardText("The name as shown, e.g. `Jane Doe`."),
  first_name: cardText("First name.").optional(),
  last_name: cardText("Last name.").optional(),
  middle_name: cardText("Middle name.").optional(),
  prefix: cardText("Name prefix, e.g. `Dr.`.").optional(),
  suffix: cardText("Name suffix, e.g. `Jr.`.").optional(),
});

const PhoneSchema = z.strictObject({
  phone: z.string().min(1).max(64).describe("The number as shown, e.g. `+1 415-555-2671`."),
  type: EntryType,
  wa_id: z
    .string()
    .max(20)
    .regex(/^\d{5,20}$/)
    .optional()
    .describe("The number's WhatsApp id (its digits); a linked device shows a Message button for it."),
});

const EmailSchema = z.strictObject({
  email: z.email().max(320).describe("An email address (RFC 5321's 320 characters at most)."),
  type: EntryType,
});

const UrlSchema = z.strictObject({
  url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .describe("A web address, http or https."),
  type: EntryType,
});

const OrgSchema = z.strictObject({
  company: cardText("Company.").optional(),
  department: cardText("Department.").optional(),
  title: cardText("Job title.").optional(),
});

/**
 * A contact card a send takes (Meta's `ContactObject`, the fields `name`, `phones`, `emails`,
 * `org` and `urls`): `name.formatted_name` is required (Meta's "Contacts messages": "Required"),
 * and, this API's rule, at least one phone, since a card without one gives its reader nothing to
 * call or message. Up to {@link MAX_CARD_ENTRIES} phones, emails and URLs, texts up to
 * {@link MAX_CARD_TEXT} characters; `type` is `HOME` or `WORK`, as the document's enums have it.
 */
export const ContactCardSendSchema = z.strictObject({
  name: NameSchema,
  phones: z.array(PhoneSchema).min(1).max(MAX_CARD_ENTRIES),
  emails: z.array(EmailSchema).min(1).max(MAX_CARD_ENTRIES).optional(),
  org: OrgSchema.optional(),
  urls: z.array(UrlSchema).min(1).max(MAX_CARD_ENTRIES).optional(),
});

/** A send's `contacts`: 1 to {@link MAX_CONTACT_CARDS} cards. */
export const ContactCardsSendSchema = z.array(ContactCardSendSchema).min(1).max(MAX_CONTACT_CARDS);

/**
 * A contact card as stored in a message's `metadata.contacts`, sent or received: the send's
 * shape, with `type` any text (a received card's kind as the sender's phone named it, `CELL`,
 * `Mobile` …; Meta's `ContactObject_1`: "cell, mobile, main, iPhone, home, work, etc.") and
 * `phones` possibly empty (a received card may carry none), and the `addresses` and `birthday` a
 * received card may have (`ContactObject_1`), which a send does not take.
 */
export const ContactCardSchema = z.object({
  name: z.object({
    formatted_name: z.string(),
    first_name: z.string().optional(),
    last_name: z.string().optional(),
    middle_name: z.string().optional(),
    prefix: z.string().optional(),
    suffix: z.string().optional(),
  }),
  phones: z.array(z.object({ phone: z.string(), type: z.string().optional(), wa_id: z.string().optional() })),
  emails: z.array(z.object({ email: z.string(), type: z.string().optional() })).optional(),
  org: z
    .object({
      company: z.string().optional(),
      department: z.string().optional(),
      title: z.string().optional(),
    })
    .optional(),
  urls: z.array(z.object({ url: z.string(), type: z.string().optional() })).optional(),
  addresses: z
    .array(
      z.object({
        street: z.string().optional(),
        city: z.string().optional(),
        state: z.string().optional(),
        zip: z.string().optional(),
        country: z.string().optional(),
        country_code: z.string().optional(),
        type: z.string().optional(),
      }),
    )
    .optional(),
  birthday: z.string().optional(),
});

/** A contact card: see {@link ContactCardSchema}. */
export type ContactCard = z.infer<typeof ContactCardSchema>;

/**
 * A received card (Meta's `ContactObject_1`, whose every field may be missing: "Many contact
 * object properties may be omitted if the WhatsApp user chooses not to share them") as a
 * {@link ContactCard}: without `name.formatted_name`, the name's parts joined stand for it (prefix,
 * first, middle, last, suffix), and without `phones`, none. Null for a card that names nobody or
 * does not read as one (a field of the wrong type).
 */
export function readContactCard(value: unknown): ContactCard | null {
  if (typeof value !== "object" || value === null) return null;
  const card = value as Record<string, unknown>;
  const name = (typeof card.name === "object" && card.name !== null ? card.name : {}) as Record<
    string,
    unknown
  >;
  const parts = [name.prefix, name.first_name, name.middle_name, name.last_name, name.suffix];
  const formatted =
    typeof name.formatted_name === "string" && name.formatted_name.trim()
      ? name.formatted_name
      : parts.filter((part) => typeof part === "string" && part.trim()).join(" ");
  if (!formatted) return null;
  const read = ContactCardSchema.safeParse({
    ...card,
    name: { ...name, formatted_name: formatted },
    phones: card.phones ?? [],
  });
  return read.success ? read.data : null;
}

/**
 * The cards an outgoing `contacts` message carries to its gateway: its queue message's content,
 * the JSON of the row's `metadata.contacts` (messages/dispatch-request.ts).
 * @throws Error when `content` is not such JSON, or holds no card (a message built by another path).
 */
export function contactCardsOf(content: string | null): ContactCard[] {
  return z
    .array(ContactCardSchema)
    .min(1)
    .parse(JSON.parse(content ?? "null"));
}

/**
 * The text a `contacts` message stores as its `content`, shown in lists and searched as any text:
 * the cards' `formatted_name`s, joined by ", ".
 */
export function contactCardsLabel(cards: readonly ContactCard[]): string {
  return cards.map((card) => card.name.formatted_name).join(", ");
}
