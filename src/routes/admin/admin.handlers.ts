import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import { beginAccountMove } from "../../account-moves/move";
import { queueMoveStep } from "../../account-moves/queue";
import { credit as creditBalance, creditStatements } from "../../billing/ledger";
import { readConfig } from "../../config";
import { ACCOUNT_TABLES } from "../../db/account-tables";
import type { Db } from "../../db/client";
import { type D1Work, d1Counts } from "../../db/d1-counter";
import {
  accountDatabaseNames,
  databaseFor,
  databaseForNewAccount,
  databaseNamed,
  describeDatabases,
  directoryOf,
  isMigrated,
  placeOf,
  routeFor,
} from "../../db/databases";
import { openAccount } from "../../db/open-account";
import { type MoveRow, moveOf } from "../../db/queries/account-moves";
import { type AccountRow, updateAccount as changeAccount, findAccount } from "../../db/queries/accounts";
import { findKeyAccountId, listKeys as listAccountKeys } from "../../db/queries/api-keys";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { type JobRun, runJob as runHourlyJob } from "../../jobs/hourly";
import { issueKey } from "../../keys/issue";
import { revokeKey as revoke } from "../../keys/revoke";
import { fromMinor, toMinor } from "../../lib/money";
import { formatTimestamp } from "../../lib/time";
import { toKeyRecord, toRevocationRecord } from "../../presenters/key";
import { pageLinks } from "../paging";
import type * as routes from "./admin.routes";

function toMoveRecord(move: MoveRow) {
  const atTable = move.phase === "copying" || move.phase === "deleting" || move.phase === "unwinding";
  return {
    from_database: move.fromDatabase,
    to_database: move.toDatabase,
    phase: move.phase,
    table: atTable ? (ACCOUNT_TABLES[move.step]?.name ?? null) : null,
    rows_copied: move.copied,
    rows_deleted: move.deleted,
    error: move.error,
    copy_after: formatTimestamp(move.holdUntil),
    switched_at: move.switchedAt === null ? null : formatTimestamp(move.switchedAt),
    created_at: formatTimestamp(move.createdAt),
    updated_at: formatTimestamp(move.updatedAt),
  };
}

function toAccountRecord(
  row: AccountRow,
  place: Pick<Place, "database" | "move">,
  defaultRetentionDays: number,
) {
  const { database, move } = place;
  return {
    id: row.id,
    name: row.name,
    balance: fromMinor(row.balance),
    max_sessions: row.maxSessions,
    max_draft_recipients: row.maxDraftRecipients,
    message_retention_days: row.messageRetentionDays ?? defaultRetentionDays,
    database,
    move: move ? toMoveRecord(move) : null,
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

const noAccount = () => new ApiError("not_found", "No such account.");

/**
 * Where a new account goes: database `named` when the admin names one, else the service's choice
 * (src/db/databases.ts `databaseForNewAccount`).
 * @throws ApiError 422 `validation_failed` for a database the deployment does not list or whose
 *   migrations are not all applied; 503 `service_unavailable` when no account database is ready.
 */
async function newAccountDatabase(c: Context<AppEnv>, named: string | undefined): Promise<string> {
  if (named === undefined) {
    const chosen = await databaseForNewAccount(c.env);
    if (chosen) return chosen;
    throw new ApiError(
      "service_unavailable",
      "No account database has its migrations applied (docs/databases.md, Databases); apply them, then try again.",
    );
  }
  await checkAccountDatabase(c, named, null);
  return named;
}

/**
 * @throws ApiError 422 `validation_failed` when account database `named` is not listed by the
 *   deployment, lacks migrations (docs/databases.md, Databases), or is `current`, the account's own.
 */
async function checkAccountDatabase(
  c: Context<AppEnv>,
  named: string,
  current: string | null,
): Promise<void> {
  const listed = accountDatabaseNames(c.env);
  const problem = !listed.includes(named)
    ? `is not an account database of this deployment (${listed.join(", ")})`
    : named === current
      ? "already holds the account"
      : !(await isMigrated(c.env, named))
        ? "has not had its migrations applied (docs/databases.md, Databases)"
        : null;
  if (problem)
    throw new ApiError("validation_failed", "The request has invalid fields.", {
      fields: { database: [problem] },
    });
}

/** Where an account is: its database, the binding's name, and its newest move between databases. */
interface Place {
  db: Db;
  database: string;
  move: MoveRow | null;
}

/**
 * Account `id`'s place, to change it: the database it is served by (src/db/databases.ts
 * `databaseFor`); to read it (`reading`), the database that holds it now, the source while it moves.
 * @throws ApiError 404 when the directory lacks it; AccountMoving (503 `account_moving`) when it is
 *   changed while it moves.
 */
async function placed(c: Context<AppEnv>, id: string, reading = false): Promise<Place> {
  const database = await placeOf(c.env, id);
  if (!database) throw noAccount();
  const db = reading ? databaseNamed(c.env, database) : await databaseFor(c.env, id);
  const move = await moveOf(directoryOf(c.env), id);
  return { db, database, move };
}

export const createAccount: RouteHandler<typeof routes.createAccount, AppEnv> = async (c) => {
  const body = c.req.valid("json");
  const balance = toMinor(body.balance ?? 0);
  const now = Date.now();
  const database = await newAccountDatabase(c, body.database);
  const input = {
    name: body.name,
    maxSessions: body.max_sessions,
    maxDraftRecipients: body.max_draft_recipients,
    messageRetentionDays: body.message_retention_days,
    database,
  };
  const { account, apiKey } = await openAccount(c.env, input, now, (id) =>
    balance > 0 ? creditStatements(id, balance, now, "Opening balance") : [],
  );
  return c.json(
    {
      success: true as const,
      data: {
        account: toAccountRecord(
          { ...account, balance },
          { database, move: null },
          readConfig(c.env).MESSAGE_RETENTION_DAYS,
        ),
        api_key: apiKey,
      },
    },
    201,
  );
};

export const updateAccount: RouteHandler<typeof routes.updateAccount, AppEnv> = async (c) => {
  const body = c.req.valid("json");
  const changes = {
    maxSessions: body.max_sessions,
    maxDraftRecipients: body.max_draft_recipients,
    messageRetentionDays: body.message_retention_days,
  };
  const { id } = c.req.valid("param");
  const place = await placed(c, id);
  const account = await changeAccount(place.db, id, changes, Date.now());
  if (!account) throw noAccount();
  return c.json(
    {
      success: true as const,
      data: { account: toAccountRecord(account, place, readConfig(c.env).MESSAGE_RETENTION_DAYS) },
    },
    200,
  );
};

export const createKey: RouteHandler<typeof routes.createKey, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const { db } = await placed(c, id);
  if (!(await findAccount(db, id))) throw noAccount();
  const body = c.req.valid("json");
  const grant = {
    name: body.name ?? null,
    scopes: body.scopes ?? ["*"],
    expiresAt: body.expires_at ? Date.parse(body.expires_at) : null,
  };
  const { row, plaintext } = await issueKey(c.env, db, id, grant, null, Date.now());
  return c.json({ success: true as const, data: { key: toKeyRecord(row), api_key: plaintext } }, 201);
};

export const listKeys: RouteHandler<typeof routes.listKeys, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const { db } = await placed(c, id);
  if (!(await findAccount(db, id))) throw noAccount();
  const query = c.req.valid("query");
  const page = { limit: query.limit, cursor: query.cursor ?? null };
  const { rows, more } = await listAccountKeys(db, id, page);
  return c.json(
    { success: true as const, data: rows.map(toKeyRecord), ...pageLinks(c, rows, { ...page, more }) },
    200,
  );
};

export const revokeKey: RouteHandler<typeof routes.revokeKey, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const cascade = c.req.valid("query").cascade !== "false";
  const accountId = (await routeFor(c.env, "api_key_id", id))?.accountId;
  const db = accountId && (await databaseFor(c.env, accountId));
  if (!accountId || !db || !(await findKeyAccountId(db, id)))
    throw new ApiError("not_found", "No such live API key.");
  const revoked = await revoke(c.env, db, accountId, id, null, { cascade, now: Date.now() });
  if (cascade) return c.json({ success: true as const, data: toRevocationRecord(revoked) }, 200);
  return c.body(null, 204);
};

export const credit: RouteHandler<typeof routes.credit, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const body = c.req.valid("json");
  const place = await placed(c, id);
  const balance = await creditBalance(
    place.db,
    id,
    toMinor(body.amount),
    Date.now(),
    body.description ?? null,
  );
  const account = balance === null ? null : await findAccount(place.db, id);
  if (!account) throw noAccount();
  return c.json(
    {
      success: true as const,
      data: { account: toAccountRecord(account, place, readConfig(c.env).MESSAGE_RETENTION_DAYS) },
    },
    200,
  );
};

export const showAccount: RouteHandler<typeof routes.showAccount, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const place = await placed(c, id, true);
  const account = await findAccount(place.db, id);
  if (!account) throw noAccount();
  return c.json(
    {
      success: true as const,
      data: { account: toAccountRecord(account, place, readConfig(c.env).MESSAGE_RETENTION_DAYS) },
    },
    200,
  );
};

export const moveAccount: RouteHandler<typeof routes.moveAccount, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const { database: to } = c.req.valid("json");
  const place = await placed(c, id, true);
  const account = await findAccount(place.db, id);
  if (!account) throw noAccount();
  let move = place.move;
  const underWay = move !== null && move.phase !== "done" && move.phase !== "failed";
  if (underWay && move?.toDatabase !== to)
    throw new ApiError(
      "account_move_in_progress",
      `The account is moving to ${move?.toDatabase}; wait for the move to end (GET /admin/accounts/${id}).`,
    );
  if (!underWay) {
    await checkAccountDatabase(c, to, place.database);
    move = await beginAccountMove(c.env, { accountId: id, from: place.database, to }, Date.now());
    if (!move)
      throw new ApiError("account_move_in_progress", "Another move of the account began at the same time.");
  }
  await queueMoveStep(c.env, id);
  return c.json(
    {
      success: true as const,
      data: {
        account: toAccountRecord(account, { ...place, move }, readConfig(c.env).MESSAGE_RETENTION_DAYS),
      },
    },
    202,
  );
};

export const metrics: RouteHandler<typeof routes.metrics, AppEnv> = (c) => {
  const { isolate, databases, ...all } = d1Counts();
  const work = ({ statements, batches, rowsRead, rowsWritten }: D1Work) => ({
    statements,
    batches,
    rows_read: rowsRead,
    rows_written: rowsWritten,
  });
  return c.json(
    {
      success: true as const,
      data: {
        isolate,
        d1: work(all),
        databases: Object.fromEntries(Object.entries(databases).map(([name, each]) => [name, work(each)])),
      },
    },
    200,
  );
};

export const listDatabases: RouteHandler<typeof routes.listDatabases, AppEnv> = async (c) => {
  const databases = await describeDatabases(c.env);
  return c.json(
    {
      success: true as const,
      data: databases.map((d) => ({ name: d.name, accounts: d.accounts, size_bytes: d.sizeBytes })),
    },
    200,
  );
};

export const runJob: RouteHandler<typeof routes.runJob, AppEnv> = async (c) => {
  const { name } = c.req.valid("param");
  let run: JobRun | null;
  try {
    run = await runHourlyJob(c.env, name);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ApiError(
      "service_unavailable",
      `The job ${name} failed: ${why}. It runs again within the hour.`,
    );
  }
  if (!run) throw new ApiError("not_found", `No hourly job is named ${name}.`);
  return c.json(
    {
      success: true as const,
      data: {
        name: run.name,
        started_at: formatTimestamp(run.startedAt),
        finished_at: formatTimestamp(run.finishedAt),
        duration_ms: run.finishedAt - run.startedAt,
        result: run.result,
        databases: run.databases,
      },
    },
    200,
  );
};
