import { rewriteArchive } from "../archives/rewrite";
import { archivesOfAccount } from "../db/queries/archives";
import { countErasedArchivedMessages, type ErasureScope } from "../db/queries/erasures";
import { formatTimestamp } from "../lib/time";
import { ERASED_METADATA, type ErasurePhase } from "./phases";

/**
 * The person's archived messages (README, Message archives): each archive of the account is read,
 * and the lines that are the person's are rewritten as the rows phase leaves their rows in D1 (so
 * an archived message shows what `GET /v1/chatapp/messages/{id}` of an erased one shows): the
 * addresses as their erased forms, `contact`, `content` and `media_url` null, `metadata` without
 * what may name them and with `erased_at`. Every archive on each run: a message archived between
 * two runs is found too. Counted as `archived_messages`.
 */
export const archivesPhase: ErasurePhase = {
  name: "archives",
  async run(env, db, { scope }, now) {
    const erasedAt = formatTimestamp(now);
    let erased = 0;
    for (const archive of await archivesOfAccount(db, scope.accountId))
      erased += await rewriteArchive(env, db, archive, (line) => erasedLine(line, scope, erasedAt));
    if (erased > 0) await countErasedArchivedMessages(db, scope.id, erased, now);
    return { done: true };
  },
};

/** The top-level `metadata` keys an erased message loses (`$.template` → `template`). */
const ERASED_KEYS = new Set(ERASED_METADATA.map((path) => path.slice(2)));

/** A Message as an archive line holds it: the fields this phase reads. */
interface ArchivedMessage {
  direction?: unknown;
  to_number?: unknown;
  from_number?: unknown;
  contact?: { id?: unknown; phone_number?: unknown; user_id?: unknown } | null;
  metadata?: Record<string, unknown>;
}

/** Archive line `line` erased when it is the person's (by address or contact id), else `line` itself. */
export function erasedLine(line: Record<string, unknown>, scope: ErasureScope, erasedAt: string) {
  const message = line as ArchivedMessage;
  const hashOf = (value: unknown) => (typeof value === "string" ? scope.hashes.get(value) : undefined);
  const contact = message.contact ?? null;
  const persons =
    hashOf(message.to_number) !== undefined ||
    hashOf(message.from_number) !== undefined ||
    (contact !== null &&
      ((typeof contact.id === "string" && scope.contactIds.includes(contact.id)) ||
        hashOf(contact.phone_number) !== undefined ||
        hashOf(contact.user_id) !== undefined));
  if (!persons) return line;
  // An outgoing message to a user id shows `to_number` null: its address is the contact's user id.
  const sentTo =
    message.direction === "outgoing" && message.to_number === null ? contact?.user_id : message.to_number;
  const metadata = Object.fromEntries(
    Object.entries(message.metadata ?? {}).filter(([key]) => !ERASED_KEYS.has(key)),
  );
  return {
    ...line,
    to_number: hashOf(sentTo) ?? message.to_number ?? null,
    from_number: hashOf(message.from_number) ?? message.from_number ?? null,
    contact: null,
    content: null,
    media_url: null,
    metadata: { ...metadata, erased_at: erasedAt },
  };
}
