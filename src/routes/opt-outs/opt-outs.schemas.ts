import { z } from "@hono/zod-openapi";
import { DEFAULT_OPT_OUT_KEYWORDS } from "../../opt-outs/keywords";
import { Address, ERASED_NOTE, eitherAddress, PhoneNumber, UserId } from "../openapi";
import { PageLinksSchema } from "../paging";

const KEYWORDS = DEFAULT_OPT_OUT_KEYWORDS.map((k) => `\`${k}\``).join(", ");

export const OptOutSchema = z
  .object({
    to_number: z
      .string()
      .nullable()
      .openapi({
        description: `The number, in E.164; null for a user id.${ERASED_NOTE}`,
        example: "+14155552671",
      }),
    user_id: z.string().nullable().openapi({
      description:
        "The user id (a BSUID or a LID) of a contact who opted out without a number known, or by each of their ids (docs/contacts.md, Contacts); null for a number.",
    }),
    source: z.enum(["api", "keyword"]).openapi({
      description: `How it was added: \`api\` (\`POST /v1/opt-outs\`) or \`keyword\` (the contact texted ${KEYWORDS} to one of the account's sessions).`,
      example: "keyword",
    }),
    keyword: z.string().nullable().openapi({
      description: "The keyword the contact sent, upper case; null for `api`.",
      example: "STOP",
    }),
    created_at: z
      .string()
      .openapi({ description: "When the number was added.", example: "2026-11-21T09:30:12.345000Z" }),
  })
  .openapi("OptOut");

export const OptOutEnvelopeSchema = z.object({ success: z.literal(true), data: OptOutSchema });

export const OptOutListSchema = z
  .object({
    success: z.literal(true),
    data: z.array(OptOutSchema).openapi({ description: "The page, newest first." }),
    ...PageLinksSchema,
  })
  .openapi("OptOutList");

/** Body of `POST /v1/opt-outs`: `{ to_number }` or `{ to_user_id }`, as `{ address }`. */
export const CreateOptOutBody = z
  .strictObject({
    to_number: PhoneNumber.optional().openapi({
      description:
        "The number to suppress, in international format (spaces, dashes and brackets allowed; a missing `+` is assumed). Stored as E.164. This or `to_user_id`.",
      example: "+14155552671",
    }),
    to_user_id: UserId.optional().openapi({
      description:
        "The user id (a BSUID or a LID) to suppress, for a contact known without a number (docs/contacts.md, Contacts). This or `to_number`.",
    }),
  })
  .transform((body, ctx) => {
    const address = eitherAddress(body, ctx);
    if (address === undefined) {
      ctx.addIssue({ code: "custom", path: ["to_number"], message: "required (or to_user_id)" });
      return z.NEVER;
    }
    return { address };
  });

/**
 * `{ to_number }` path parameter: a number in international format, normalised to E.164 (encode
 * the `+` as `%2B` or leave it out), or a user id as listed; one that is neither is answered 404,
 * like an unlisted one.
 */
export const ToNumberParam = z.object({
  to_number: Address.openapi({
    param: { name: "to_number", in: "path" },
    description:
      "The number, with its `+` URL-encoded (`%2B14155552671`) or left out (`14155552671`); or the user id of an entry with `user_id` (`US.13491208655302741918`, `120363025246125888%40lid`).",
    example: "+14155552671",
  }),
});
