import { z } from "@hono/zod-openapi";
import { IDENTIFIER_KINDS } from "../../db/schema";
import { PhoneNumber, UserId } from "../openapi";
import { CursorParam, Limit, PageLinksSchema } from "../paging";

const timestamp = (description: string) =>
  z.string().nullable().openapi({ description, example: "2026-11-21T09:30:12.345000Z" });

/** A message's contact: who is on the other side of the chat (docs/contacts.md, Contacts). */
export const ContactRefSchema = z
  .object({
    id: z.string().nullable().openapi({
      description:
        "The contact's id (`GET /v1/contacts/{id}`); null on a message whose contact the service does not keep (sent to an address no contact is known by yet, or stored before contacts were kept).",
      example: "ct_9f1c2b7e4a5d4e0f8a3b6c1d2e7f9a04",
    }),
    phone_number: z.string().nullable().openapi({
      description: "Their number (E.164), or null while the network has not given it.",
      example: "+14155552671",
    }),
    user_id: z.string().nullable().openapi({
      description:
        "The network's id of the user: a business-scoped user id (BSUID) on the Cloud API, a LID (`<digits>@lid`) on linked devices; the newest one learnt.",
      example: "US.13491208655302741918",
    }),
    parent_user_id: z
      .string()
      .nullable()
      .openapi({ description: "The Cloud API's parent BSUID (`US.ENT.…`), when the business uses them." }),
    username: z.string().nullable().openapi({ description: "Their username (display only: it changes)." }),
    name: z.string().nullable().openapi({ description: "Their profile name." }),
  })
  .openapi("ContactRef");

/** A contact, as listed and as its events carry it. */
export const ContactSchema = ContactRefSchema.extend({
  id: z
    .string()
    .openapi({ description: "The contact's id.", example: "ct_9f1c2b7e4a5d4e0f8a3b6c1d2e7f9a04" }),
  chatapp_session_id: z.string().openapi({ description: "The session whose chats the contact is in." }),
  first_message_at: timestamp("When the contact's first stored message was sent; null before any."),
  last_message_at: timestamp("When their latest stored message was sent; null before any."),
  window_open_until: timestamp(
    "The end of the 24-hour customer service window their latest message opened (Cloud API sessions send free-form messages only inside it), past or not; null before any.",
  ),
  created_at: z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" }),
  updated_at: z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" }),
}).openapi("Contact");

/** A contact as `GET /v1/contacts/{id}` shows it. */
export const ContactDetailSchema = ContactSchema.extend({
  identifiers: z
    .array(
      z.object({
        kind: z.enum(IDENTIFIER_KINDS),
        value: z.string(),
        since: z.string().openapi({ description: "When the service learnt it." }),
      }),
    )
    .openapi({
      description:
        "Every identifier the contact was ever known by, oldest first: a BSUID that changed with their number stays, and still finds them.",
    }),
  opted_out: z.boolean().openapi({ description: "Whether the account's opt-out list holds the contact." }),
}).openapi("ContactDetail");

/** `data` of a `contact.updated` event: the contact after the change and before it. */
export const ContactUpdateSchema = z
  .object({ contact: ContactSchema, previous: ContactSchema })
  .openapi("ContactUpdate");

export const ContactEnvelopeSchema = z.object({ success: z.literal(true), data: ContactDetailSchema });

export const ContactListSchema = z
  .object({
    success: z.literal(true),
    data: z.array(ContactSchema).openapi({ description: "The page, newest first." }),
    ...PageLinksSchema,
  })
  .openapi("ContactList");

/** Query of `GET /v1/contacts`. */
export const ContactListQuery = z.object({
  "filter[session_id]": z.uuid().max(36).optional().openapi({ description: "Contacts of this session." }),
  "filter[phone_number]": PhoneNumber.optional().openapi({
    description: "Contacts ever known by this number.",
  }),
  "filter[user_id]": UserId.optional().openapi({ description: "Contacts ever known by this user id." }),
  "filter[username]": z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ description: "Contacts with this username now." }),
  limit: Limit,
  cursor: CursorParam.optional(),
});

/** `{ id }` path parameter holding a contact id; a malformed one is answered 404. */
export const ContactIdParam = z.object({
  id: z
    .string()
    .max(35)
    .openapi({ param: { name: "id", in: "path" }, example: "ct_9f1c2b7e4a5d4e0f8a3b6c1d2e7f9a04" }),
});
