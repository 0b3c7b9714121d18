import { z } from "@hono/zod-openapi";
import { MESSAGE_TYPES } from "../../messages/message-record";
import { moneyAmount } from "../openapi";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

/** A value per message type. */
const perType = <T extends z.ZodType>(value: T) =>
  z.object(
    Object.fromEntries(MESSAGE_TYPES.map((type) => [type, value])) as Record<
      (typeof MESSAGE_TYPES)[number],
      T
    >,
  );

/** The caller's own account as `GET /v1/account` shows it: what the balance buys now. */
export const AccountSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    balance: z.number().openapi({ description: "Balance in major units.", example: 9.98 }),
    remaining_messages: perType(z.int()).openapi({
      description:
        "How many messages of each type the balance covers (a part-message rounds down; for text, as `remaining_messages` after a send).",
      example: { text: 998, image: 499, video: 332, audio: 499, document: 499 },
    }),
    low_balance_threshold: z.number().nullable().openapi({
      description:
        "Major units: a charge that takes the balance from this or more to below it records `account.balance_low`. Null: no alert.",
      example: 5,
    }),
    prices: perType(z.number()).openapi({
      description: "Price of one message by type, in major units.",
      example: { text: 0.01, image: 0.02, video: 0.03, audio: 0.02, document: 0.02 },
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Account");

export const AccountEnvelopeSchema = z.object({ success: z.literal(true), data: AccountSchema });

/** Body of `PATCH /v1/account`: each field given is changed, the others kept. */
export const UpdateAccountBody = z.strictObject({
  name: z.string().trim().min(1).max(100).optional().openapi({ example: "Acme" }),
  low_balance_threshold: moneyAmount(0).nullable().optional().openapi({
    description:
      "Major units, at most 2 decimals, as `balance`: below it a charge records `account.balance_low`. `null` turns the alert off.",
    example: 5,
  }),
});
