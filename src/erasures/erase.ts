import type { Db } from "../db/client";
import {
  completeErasure,
  type ErasureRow,
  findErasure,
  insertErasure,
  pendingErasures,
  personOf,
} from "../db/queries/erasures";
import { publishEvents } from "../events/publish";
import { recordedIn } from "../events/record";
import { log } from "../lib/log";
import { CAMPAIGN_TRANSITIONS } from "../moves/campaign";
import { MESSAGE_TRANSITIONS } from "../moves/message";
import { erasedAddress, erasedAddresses, erasureKeys, openSubject, sealSubject } from "./address";
import { archivesPhase } from "./archives-phase";
import { type ErasurePhase, rowsPhase, storedAnswersPhase } from "./phases";

/**
 * The phases of every erasure, in the order they run (src/erasures/phases.ts `ErasurePhase`).
 * An erasure completes on the first run in which every phase is done; until then it stays
 * `pending` and the hourly `complete_erasures` runs them all again. A new place that holds a
 * contact's data adds its phase here.
 */
export const ERASURE_PHASES: readonly ErasurePhase[] = [storedAnswersPhase, rowsPhase, archivesPhase];

/** A new erasure id: `ers_` and 32 hex digits. */
export function newErasureId(): string {
  return `ers_${crypto.randomUUID().replaceAll("-", "")}`;
}

/**
 * Erases everything account `accountId` holds about the person `address` (an E.164 number or a
 * user id) names (docs/contacts.md, Erasure; GDPR Art. 17): every address and contact of theirs
 * (db/queries/erasures.ts `personOf`). The erasure is stored first, `pending`, with only the hash
 * of `address` and its subject sealed, then run at once ({@link runErasure}). An address the
 * account never met, or a person erased before, gives an erasure that completes erasing nothing.
 * @param now epoch ms. @returns the erasure as it then stands.
 * @throws ConfigError when `OTP_SECRET` is missing (src/erasures/address.ts `erasureKeys`).
 */
export async function requestErasure(
  env: Env,
  db: Db,
  accountId: string,
  address: string,
  now: number,
): Promise<ErasureRow> {
  const keys = await erasureKeys(env);
  const subject = await personOf(db, accountId, address);
  const id = newErasureId();
  await insertErasure(db, {
    id,
    accountId,
    address: await erasedAddress(keys, accountId, address),
    status: "pending",
    sealedAddresses: await sealSubject(keys, id, subject),
    createdAt: now,
    updatedAt: now,
  });
  return runErasure(env, db, accountId, id, now);
}

/**
 * Runs every phase of the account's pending erasure `id` at `now` (epoch ms), and completes it
 * (`contact.erased`, published to the account's webhooks) when every phase is done. A completed
 * erasure is left as it is. @returns the erasure as it then stands.
 * @throws what a phase throws (D1 or R2 refusing): the erasure stays pending, for the next run.
 */
export async function runErasure(
  env: Env,
  db: Db,
  accountId: string,
  id: string,
  now: number,
): Promise<ErasureRow> {
  const row = await findErasure(db, accountId, id);
  if (!row) throw new Error(`erasure ${id} not found`);
  if (row.status !== "pending" || row.sealedAddresses === null) return row;
  const keys = await erasureKeys(env);
  const subject = await openSubject(keys, id, row.sealedAddresses);
  const scope = {
    id,
    accountId,
    createdAt: row.createdAt,
    hashes: await erasedAddresses(keys, accountId, subject.addresses),
    contactIds: subject.contactIds,
    waiting: MESSAGE_TRANSITIONS.sent.from,
    active: CAMPAIGN_TRANSITIONS.complete.from,
  };
  let done = true;
  for (const phase of ERASURE_PHASES) {
    const result = await phase.run(env, db, { scope, subject }, now);
    done &&= result.done;
  }
  if (done) await publishEvents(env, recordedIn(await completeErasure(db, id, now), [1]));
  const after = await findErasure(db, accountId, id);
  if (!after) throw new Error(`erasure ${id} not found after its run`);
  return after;
}

/** Pending erasures one run of {@link completePendingErasures} takes; the rest wait an hour. */
const PENDING_BATCH = 100;

/**
 * The hourly `complete_erasures` job: runs each pending erasure again ({@link runErasure}), so one
 * that waited for a message to leave, or for a later phase, completes once nothing of the person
 * is left. Each on its own: one that fails is logged (`erasure_run_failed`) and the others run.
 * @param now epoch ms. @returns how many it completed.
 */
export async function completePendingErasures(env: Env, db: Db, now: number): Promise<number> {
  let completed = 0;
  for (const row of await pendingErasures(db, now, PENDING_BATCH)) {
    try {
      const after = await runErasure(env, db, row.accountId, row.id, now);
      if (after.status === "completed") completed++;
    } catch (error) {
      log.error("erasure_run_failed", { erasure_id: row.id, error });
    }
  }
  return completed;
}
