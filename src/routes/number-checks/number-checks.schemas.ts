import { z } from "@hono/zod-openapi";
import { MAX_NUMBER_CHECK } from "../../gateways/gateway";
import { PhoneNumber } from "../openapi";

export const CheckNumbersBody = z.strictObject({
  numbers: z
    .array(PhoneNumber)
    .min(1)
    .max(MAX_NUMBER_CHECK)
    .openapi({
      description: `1–${MAX_NUMBER_CHECK} numbers in international format, normalised to E.164 as for sends; a repeat is answered once.`,
      example: ["+14155552671", "+14155550000"],
    }),
});

export const NumberCheckSchema = z
  .object({
    number: z.string().openapi({ description: "The number, in E.164.", example: "+14155552671" }),
    on_chatapp: z
      .boolean()
      .nullable()
      .openapi({
        description:
          "Whether the number is on the chat network; null when the gateway could not tell (it failed, or, " +
          "as the WhatsApp Cloud API, has no way to ask). A null answer is not cached.",
      }),
    checked_at: z.string().openapi({
      description: "When the gateway gave this answer: earlier than now when it came from the 7-day cache.",
      example: "2026-11-21T09:30:12.345000Z",
    }),
  })
  .openapi("NumberCheck");

export const NumberCheckListSchema = z.object({
  success: z.literal(true),
  data: z.array(NumberCheckSchema).openapi({ description: "One per distinct number, in request order." }),
});
