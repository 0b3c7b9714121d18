import { z } from "@hono/zod-openapi";
import { eitherAddress, PhoneNumber, UserId } from "../openapi";
import { PageLinksSchema } from "../paging";

const count = (description: string) => z.int().openapi({ description, example: 0 });

export const ErasureSchema = z
  .object({
    id: z.string().openapi({ example: "ers_3f2c9a7e1b6d4c08a5e97d2b1f04c6aa" }),
    address: z.string().openapi({
      description:
        "The keyed hash of the number or user id erased (`erased:` and 64 hex digits), as it now stands in the erased rows " +
        "(messages' `to_number` and `from_number`, OTPs, campaign recipients, opt-outs): the same for the same address, never the address.",
      example: "erased:9b74c9897bac770ffc029102a200c5de3c1d5d0e4f1b0a3f0c9f1b1d8e2a7c4f",
    }),
    status: z.enum(["pending", "completed"]).openapi({
      description:
        "`completed` once nothing of the contact is left; `pending` while something still waits (a message not yet sent, " +
        "a pending recipient of a running campaign), which the hourly `complete_erasures` job erases once it may.",
      example: "completed",
    }),
    counts: z
      .object({
        messages: count("Messages (sent and received) whose text, media and addresses were erased."),
        media_objects: count("Stored media files deleted."),
        otps: count("One-time codes whose number was replaced by its hash."),
        campaign_recipients: count(
          "Campaign recipients erased: hashed in started campaigns, removed from drafts.",
        ),
        contacts: count("Contacts deleted, with their identifiers and customer service window."),
        opt_outs: count("Opt-outs kept as the hash, so campaigns still skip the contact."),
        events: count("Events purged, with their webhook deliveries."),
        archived_messages: count(
          "Archived messages (`GET /v1/account/archives`) erased, their archives rewritten.",
        ),
        archived_otps: count("Archived OTPs erased (their numbers hashed), their archives rewritten."),
        archived_campaign_recipients: count(
          "Archived campaign recipients erased (hashed, variables gone), their archives rewritten.",
        ),
      })
      .openapi({ description: "What the erasure erased, summed over its runs." }),
    created_at: z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" }),
    completed_at: z.string().nullable().openapi({
      description: "When it completed; null while pending.",
      example: "2026-11-21T09:30:12.456000Z",
    }),
  })
  .openapi("Erasure");

export const ErasureEnvelopeSchema = z.object({ success: z.literal(true), data: ErasureSchema });

export const ErasureListSchema = z
  .object({
    success: z.literal(true),
    data: z.array(ErasureSchema).openapi({ description: "The page, newest first." }),
    ...PageLinksSchema,
  })
  .openapi("ErasureList");

/** Body of `POST /v1/erasures`: `{ phone_number }` or `{ user_id }`, as `{ address }`. */
export const CreateErasureBody = z
  .strictObject({
    phone_number: PhoneNumber.optional().openapi({
      description:
        "The contact's number, in international format (normalised to E.164 as for sends). This or `user_id`.",
      example: "+14155552671",
    }),
    user_id: UserId.optional().openapi({
      description:
        "The contact's user id (a BSUID or a LID; docs/contacts.md, Contacts). This or `phone_number`.",
    }),
  })
  .transform((body, ctx) => {
    const address = eitherAddress(body, ctx, { number: "phone_number", userId: "user_id" });
    if (address === undefined) {
      ctx.addIssue({ code: "custom", path: ["phone_number"], message: "required (or user_id)" });
      return z.NEVER;
    }
    return { address };
  });

/** `{ id }` path parameter holding an erasure id (`ers_` and 32 hex digits); a malformed one is answered 404. */
export const ErasureIdParam = z.object({
  id: z
    .string()
    .max(36)
    .openapi({ param: { name: "id", in: "path" }, example: "ers_3f2c9a7e1b6d4c08a5e97d2b1f04c6aa" }),
});
