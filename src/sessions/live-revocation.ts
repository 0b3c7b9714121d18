import type { Db } from "../db/client";
import { listSessionIds } from "../db/queries/sessions";
import { log } from "../lib/log";
import { sessionStub } from "./stub";

/**
 * Closes the live sockets opened with any of the API keys `keyIds`, which were just revoked, or
 * with any of the link tokens `linkTokenIds` revoked with them (the tokens those keys minted), on
 * every session of account `accountId` (codes 4401 `key revoked` and 4403 `link revoked`;
 * ChatSession `closeSockets`). Call it after the revoke is stored, with every key it revoked (one,
 * or a key and those revoked with it) and every token it revoked.
 *
 * Best effort, and never throws: the account's sessions are read from D1 and each session object
 * is called at once; a failure (D1, or an object that cannot be reached) is logged
 * (`live_close_failed`) and left to the session's own check, which closes a revoked key's or
 * token's socket before its next frame (live.ts `LiveWatchers.broadcast`).
 * @returns how many sockets were closed.
 */
export async function closeKeySockets(
  env: Env,
  db: Db,
  accountId: string,
  keyIds: string[],
  linkTokenIds: string[] = [],
): Promise<number> {
  if (keyIds.length === 0 && linkTokenIds.length === 0) return 0;
  let ids: string[];
  try {
    ids = await listSessionIds(db, accountId);
  } catch (error) {
    logFailure({ accountId, keyIds, error });
    return 0;
  }
  const results = await Promise.allSettled(
    ids.map((id) => sessionStub(env, id).closeSockets({ keyIds, linkTokenIds })),
  );
  let closed = 0;
  results.forEach((result, i) => {
    if (result.status === "fulfilled") closed += result.value;
    else logFailure({ accountId, keyIds, session: ids[i], error: result.reason });
  });
  return closed;
}

function logFailure(failure: {
  accountId: string;
  keyIds: string[];
  session?: string;
  error: unknown;
}): void {
  log.error("live_close_failed", {
    account: failure.accountId,
    keys: failure.keyIds,
    session: failure.session,
    error: failure.error,
  });
}
