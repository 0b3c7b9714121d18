import type { Db } from "../db/client";
import {
  type ErasureScope,
  eraseRows,
  recentErasableMessages,
  replaceStoredAnswer,
  storedAnswersNaming,
  unsharedMediaOf,
} from "../db/queries/erasures";
import { IDEMPOTENCY_TTL_MS } from "../db/queries/idempotency";
import { formatTimestamp } from "../lib/time";
import type { ErasureSubject } from "./address";

/** A pending erasure as its phases read it: its scope (ids, time, the addresses and their hashes) and subject. */
export interface OpenErasure {
  scope: ErasureScope;
  subject: ErasureSubject;
}

/**
 * One phase of an erasure (docs/contacts.md, Erasure): it erases what it can of the person now, records
 * what it erased on the erasure row, and says whether anything of theirs is left for it (`done`
 * false: a message still waiting to be sent, an archived day not yet rewritten). A phase finds
 * the person by their clear addresses (`scope.hashes`' keys) and leaves only hashes behind, so it
 * may run again at any time, and once more after a failure: what it erased is not found again.
 */
export interface ErasurePhase {
  /** snake_case, as logs name it. */
  name: string;
  run(env: Env, db: Db, erasure: OpenErasure, now: number): Promise<{ done: boolean }>;
}

/**
 * The keys a message's `metadata` loses when it is erased (src/messages/metadata.ts): what may
 * name the person or quote them: a template's variables, a location (where they are or were sent
 * to), an interactive message's texts and a tap on one, contact cards, a poll and its votes (by
 * voter, and the counts that show a one-person chat's vote), an edited text's earlier texts,
 * reactions (by number), gateway errors (which may name the number), and an incoming media
 * error's words.
 */
export const ERASED_METADATA = [
  "$.template",
  "$.location",
  "$.interactive",
  "$.interactive_reply",
  "$.contacts",
  "$.poll",
  "$.poll_votes",
  "$.poll_votes_removed",
  "$.poll_counts",
  "$.edits",
  "$.reactions",
  "$.reactions_removed",
  "$.last_error",
  "$.send_attempts",
  "$.media_error",
] as const;

/**
 * The answers kept for `Idempotency-Key` replays (src/middleware/idempotency.ts, 24 hours) that
 * show the person: each address becomes its erased form, and their messages lose `content` and
 * `media_url`, as the messages themselves do; a contact of theirs loses its `username` and
 * `name`. The answer stays (a retry still replays it, and sends nothing twice). Runs before the
 * rows phase, which makes the messages no longer the person's by address.
 */
export const storedAnswersPhase: ErasurePhase = {
  name: "stored_answers",
  async run(_env, db, { scope, subject }, now) {
    const messageIds = new Set(await recentErasableMessages(db, scope, now - IDEMPOTENCY_TTL_MS - 3_600_000));
    const contactIds = new Set(subject.contactIds);
    for (const answer of await storedAnswersNaming(db, scope, [...messageIds])) {
      const scrubbed = JSON.stringify(
        scrub(JSON.parse(answer.responseBody), scope.hashes, messageIds, contactIds),
      );
      if (scrubbed !== answer.responseBody)
        await replaceStoredAnswer(db, scope.accountId, answer.key, answer.responseBody, scrubbed);
    }
    return { done: true };
  },
};

/** `value` (a parsed JSON answer) with the person erased from it, as {@link storedAnswersPhase} says. */
function scrub(
  value: unknown,
  hashes: ReadonlyMap<string, string>,
  messageIds: ReadonlySet<string>,
  contactIds: ReadonlySet<string>,
): unknown {
  if (typeof value === "string") return hashes.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, hashes, messageIds, contactIds));
  if (value === null || typeof value !== "object") return value;
  const object: Record<string, unknown> = Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, scrub(item, hashes, messageIds, contactIds)]),
  );
  const id = typeof object.id === "string" ? object.id : "";
  const gone = messageIds.has(id) ? ["content", "media_url"] : contactIds.has(id) ? ["username", "name"] : [];
  for (const key of gone) if (key in object) object[key] = null;
  return object;
}

/** Keys one R2 `delete` takes at most (Cloudflare R2 docs, Workers API: `delete`). */
const R2_DELETE_MAX = 1_000;

/**
 * The person's rows in D1 and their stored media in R2 (`MEDIA`): first the files no one else's
 * message needs (db/queries/erasures.ts `unsharedMediaOf`) are deleted, then every row, in one D1
 * batch (`eraseRows`), which counts those files. A failure after the files went leaves the rows to
 * the next run (deleting a missing object is no error). Done when nothing of the person waits.
 */
export const rowsPhase: ErasurePhase = {
  name: "rows",
  async run(env, db, { scope }, now) {
    const keys = await unsharedMediaOf(db, scope);
    for (let i = 0; i < keys.length; i += R2_DELETE_MAX)
      await env.MEDIA.delete(keys.slice(i, i + R2_DELETE_MAX));
    const { waiting } = await eraseRows(db, scope, {
      mediaObjects: keys.length,
      erasedAt: formatTimestamp(now),
      removed: ERASED_METADATA,
      now,
    });
    return { done: !waiting };
  },
};
