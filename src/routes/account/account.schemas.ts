import { z } from "@hono/zod-openapi";
import { MESSAGE_TYPES } from "../../messages/message-record";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

/** The caller's own account as `GET /v1/account` shows it: what the balance buys now. */
export const AccountSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    balance: z.number().openapi({ description: "Balance in major units.", example: 9.98 }),
    remaining_messages: z.int().openapi({
      description: "How many text messages the balance covers (as `remaining_messages` after a send).",
      example: 998,
    }),
    prices: z
      .record(z.enum(MESSAGE_TYPES), z.number())
      .openapi({ description: "Price of one message by type, in major units.", example: { text: 0.01 } }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Account");

export const AccountEnvelopeSchema = z.object({ success: z.literal(true), data: AccountSchema });
