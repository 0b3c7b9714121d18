import { z } from "@hono/zod-openapi";
import { ApiKeyPlaintext } from "../api-keys/api-keys.schemas";

/** A decimal amount in major units with at most 2 decimals (stored as integer minor units). */
const amount = (min: number) =>
  z
    .number()
    .min(min)
    .max(1_000_000_000)
    .refine((n) => Math.abs(Math.round(n * 100) - n * 100) < 1e-6, "at most 2 decimal places")
    .openapi({ example: 50 });

export const AccountSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    balance: z.number().openapi({ description: "Balance in major units.", example: 50 }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Account");

export const CreateAccountBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  balance: amount(0).optional(),
});
export const CreditBody = z.strictObject({ amount: amount(0.01) });

export const CreatedAccountSchema = z.object({
  success: z.literal(true),
  data: z.object({ account: AccountSchema, api_key: ApiKeyPlaintext }),
});
export const AccountEnvelopeSchema = z.object({
  success: z.literal(true),
  data: z.object({ account: AccountSchema }),
});

export const MetricsSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      isolate: z.string().openapi({
        description:
          "Random id of the isolate that answered; a new id means its counts started again from zero.",
      }),
      d1: z
        .object({
          statements: z.int().openapi({
            description: "Statements D1 ran: one per statement of a batch, one per single query.",
          }),
          batches: z.int().openapi({ description: "Round trips to D1 (a batch or a single query)." }),
          rows_read: z.int().openapi({ description: "Sum of `meta.rows_read` D1 returned." }),
          rows_written: z.int().openapi({ description: "Sum of `meta.rows_written` D1 returned." }),
        })
        .openapi({ description: "D1 work of this isolate since it started (src/db/d1-counter.ts)." }),
    }),
  })
  .openapi("Metrics");
