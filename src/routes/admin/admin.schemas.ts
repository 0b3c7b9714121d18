import { z } from "@hono/zod-openapi";
import { MOVE_PHASES } from "../../db/directory-schema";
import { DEFAULT_MAX_DRAFT_RECIPIENTS, DEFAULT_MAX_SESSIONS } from "../../db/schema";
import { HOURLY_JOBS } from "../../jobs/hourly";
import { ApiKeyPlaintext } from "../api-keys/api-keys.schemas";
import { moneyAmount as amount } from "../openapi";

/** An account's newest move between account databases (docs/databases.md, Databases, Moving an account). */
export const AccountMoveSchema = z
  .object({
    from_database: z.string().openapi({ example: "DB_ACCOUNTS_0" }),
    to_database: z.string().openapi({ example: "DB_ACCOUNTS_1" }),
    phase: z.enum(MOVE_PHASES).openapi({
      description:
        "`holding` (the account is refused while every isolate learns of the move), `copying` (refused; its rows " +
        "are copied, then counted on both sides), `deleting` (served by `to_database`; its rows leave " +
        "`from_database`), `done`; or `unwinding` (served by `from_database` again; the partial copy is deleted) " +
        "and `failed`, with `error`. While `holding` or `copying`, the account's requests answer 503 `account_moving`.",
      example: "copying",
    }),
    table: z.string().nullable().openapi({
      description: "The table being copied or deleted; null when holding or ended.",
      example: "messages",
    }),
    rows_copied: z.int().openapi({ example: 12_000 }),
    rows_deleted: z.int().openapi({ example: 0 }),
    error: z.string().nullable().openapi({
      description: "Why the move unwound (`unwinding`, `failed`); else null.",
      example: null,
    }),
    copy_after: z.string().openapi({
      description: "When the hold ends and the copy may begin (UTC).",
      example: "2026-11-28T16:00:30.000000Z",
    }),
    switched_at: z
      .string()
      .nullable()
      .openapi({
        description:
          "When the directory switched the account to `to_database` (UTC): from then on it is served again. Null " +
          "before the switch, and for a move that unwound.",
        example: "2026-11-28T16:00:42.500000Z",
      }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("AccountMove");

/**
 * An account as the admin API shows it. Its own component name: `Account` is the owner's view
 * (`GET /v1/account`), and two schemas under one name would leave one of them documented wrongly.
 */
export const AccountSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    balance: z.number().openapi({ description: "Balance in major units.", example: 50 }),
    max_sessions: z.int().openapi({
      description: "Sessions the account may hold (every session not deleted).",
      example: DEFAULT_MAX_SESSIONS,
    }),
    max_draft_recipients: z.int().openapi({
      description: "Recipients the account's `draft` campaigns may hold together.",
      example: DEFAULT_MAX_DRAFT_RECIPIENTS,
    }),
    message_retention_days: z.int().openapi({
      description:
        "Days a final message stays before the hourly job archives it (docs/retention.md, Archives): the account's own, else `MESSAGE_RETENTION_DAYS`.",
      example: 90,
    }),
    database: z.string().openapi({
      description:
        "The account database that holds the account: its D1 binding's name (docs/databases.md, Databases).",
      example: "DB_ACCOUNTS_0",
    }),
    move: AccountMoveSchema.nullable().openapi({
      description: "Its newest move between account databases, or null when it never moved.",
    }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("AdminAccount");

export const DatabaseListSchema = z
  .object({
    success: z.literal(true),
    data: z.array(
      z.object({
        name: z
          .string()
          .openapi({ description: "The D1 binding's name in wrangler.toml.", example: "DB_ACCOUNTS_0" }),
        accounts: z
          .int()
          .openapi({ description: "Accounts it holds (the directory's count).", example: 120 }),
        size_bytes: z.int().nullable().openapi({
          description: "Its size as D1 reports it (`meta.size_after`), or null.",
          example: 81_920,
        }),
      }),
    ),
  })
  .openapi("AccountDatabases");

/** Largest `max_sessions` the admin may set. */
export const MAX_SESSIONS_CEILING = 100_000;
/** Largest `max_draft_recipients` the admin may set. */
export const MAX_DRAFT_RECIPIENTS_CEILING = 100_000_000;

/** The limits of an account as the admin sets them (docs/security.md, Account limits). */
const limitFields = {
  max_sessions: z
    .int()
    .min(0)
    .max(MAX_SESSIONS_CEILING)
    .optional()
    .openapi({
      description: `Sessions the account may hold, every session not deleted (0–${MAX_SESSIONS_CEILING.toLocaleString("en")}; default ${DEFAULT_MAX_SESSIONS}). A lower value than the account holds keeps its sessions and refuses new ones.`,
      example: 100,
      format: "int32",
    }),
  max_draft_recipients: z
    .int()
    .min(0)
    .max(MAX_DRAFT_RECIPIENTS_CEILING)
    .optional()
    .openapi({
      description: `Recipients the account's \`draft\` campaigns may hold together (0–${MAX_DRAFT_RECIPIENTS_CEILING.toLocaleString("en")}; default ${DEFAULT_MAX_DRAFT_RECIPIENTS.toLocaleString("en")}). A lower value than they hold keeps them and refuses new ones.`,
      example: 2_000_000,
      format: "int32",
    }),
  message_retention_days: z.int().min(0).max(3650).nullable().optional().openapi({
    description:
      "Days a final message stays in the database before the hourly job archives it to R2 (0–3,650; 0: as soon as it is final; docs/retention.md, Archives). `null` returns to the deployment's `MESSAGE_RETENTION_DAYS` (90 by default).",
    example: 30,
    format: "int32",
  }),
};

/** The binding name of an account database, as a request names one. */
const databaseName = z
  .string()
  .max(40)
  .regex(/^DB_ACCOUNTS_\d+$/);

export const CreateAccountBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  balance: amount(0).optional(),
  ...limitFields,
  database: databaseName.optional().openapi({
    description:
      "The account database to put the account in (`GET /admin/databases`); when left out, the one with the " +
      "fewest accounts (docs/databases.md, Databases). One the deployment does not list is 422 `validation_failed`.",
    example: "DB_ACCOUNTS_1",
  }),
});

/** Body of `POST /admin/accounts/{id}/move`. */
export const MoveAccountBody = z.strictObject({
  database: databaseName.openapi({
    description:
      "The account database to move the account to (`GET /admin/databases`): one the deployment lists, with its " +
      "migrations applied, other than the account's.",
    example: "DB_ACCOUNTS_1",
  }),
});

/** Body of `PATCH /admin/accounts/{id}`: each limit or retention given is changed, the others kept. */
export const UpdateAccountBody = z.strictObject(limitFields);
export const CreditBody = z.strictObject({
  amount: amount(0.01),
  description: z.string().trim().min(1).max(200).optional().openapi({
    description: "A note kept with the credit, shown as its `source.description` in the account's ledger.",
    example: "Invoice 2026-114",
  }),
});

export const CreatedAccountSchema = z.object({
  success: z.literal(true),
  data: z.object({ account: AccountSchema, api_key: ApiKeyPlaintext }),
});
export const AccountEnvelopeSchema = z.object({
  success: z.literal(true),
  data: z.object({ account: AccountSchema }),
});

const D1WorkSchema = z.object({
  statements: z.int().openapi({
    description: "Statements D1 ran: one per statement of a batch, one per single query.",
  }),
  batches: z.int().openapi({ description: "Round trips to D1 (a batch or a single query)." }),
  rows_read: z.int().openapi({ description: "Sum of `meta.rows_read` D1 returned." }),
  rows_written: z.int().openapi({ description: "Sum of `meta.rows_written` D1 returned." }),
});

export const MetricsSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      isolate: z.string().openapi({
        description:
          "Random id of the isolate that answered; a new id means its counts started again from zero.",
      }),
      d1: D1WorkSchema.openapi({
        description: "D1 work of this isolate since it started (src/db/d1-counter.ts).",
      }),
      databases: z.record(z.string(), D1WorkSchema).openapi({
        description:
          "The same work by database, keyed by its binding's name (`DB`, the directory; `DB_ACCOUNTS_0`, …): " +
          "docs/databases.md, Databases.",
      }),
    }),
  })
  .openapi("Metrics");

/** `{ name }` path parameter of `POST /admin/jobs/{name}`: an hourly job's name. */
export const JobNameParam = z.object({
  name: z
    .string()
    .max(64)
    .openapi({
      param: { name: "name", in: "path" },
      description: `The job: one of ${HOURLY_JOBS.map((job) => `\`${job.name}\``).join(", ")}.`,
      example: "purge_events",
    }),
});

export const JobRunSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      name: z.string(),
      started_at: z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" }),
      finished_at: z.string().openapi({ example: "2026-11-21T09:30:12.401000Z" }),
      duration_ms: z.int(),
      result: z.unknown().openapi({
        description:
          "What the job answered (a count, the ids it touched…) over every account database, their answers " +
          "added up (numbers summed, `more` true if any is), or null when it answers nothing.",
      }),
      databases: z
        .array(
          z.object({
            database: z.string().openapi({ example: "DB_ACCOUNTS_0" }),
            result: z.unknown(),
            skipped: z.boolean().openapi({
              description:
                "Whether the job left this database alone: a move under way copies an account from or to it " +
                "(docs/databases.md, Databases, Moving an account); the next run after the move does its work.",
            }),
          }),
        )
        .openapi({
          description:
            "Each database's own answer (docs/databases.md, Databases): the directory's (`DB`) first for a job with work " +
            "there (`purge_idempotency_keys`, the admin API's keys; `purge_link_tokens`, the tokens' routes), " +
            "then each account database's.",
        }),
    }),
  })
  .openapi("JobRun");
