import { rewriteArchive } from "../archives/rewrite";
import { archivesOfAccount } from "../db/queries/archives";
import { countErasedArchived, type ErasureScope } from "../db/queries/erasures";
import type { ArchiveKind } from "../db/schema";
import { formatTimestamp } from "../lib/time";
import { ERASED_METADATA, type ErasurePhase } from "./phases";

/**
 * The person's archived messages, OTPs and campaign recipients (docs/retention.md, Archives): each archive
 * of the account is read, and the lines that are the person's are rewritten as the rows phase
 * leaves their rows in D1, so an archived record shows what `GET` of an erased one shows
 * ({@link erasedLine}, {@link erasedOtpLine}, {@link erasedRecipientLine}). Every archive on each
 * run: a record archived between two runs is found too. Counted as `archived_messages`,
 * `archived_otps` and `archived_campaign_recipients`.
 */
export const archivesPhase: ErasurePhase = {
  name: "archives",
  async run(env, db, { scope }, now) {
    const erasedAt = formatTimestamp(now);
    const erase = {
      messages: (line: Record<string, unknown>) => erasedLine(line, scope, erasedAt),
      otps: (line: Record<string, unknown>) => erasedOtpLine(line, scope),
      campaign_recipients: (line: Record<string, unknown>) => erasedRecipientLine(line, scope),
    } satisfies Record<ArchiveKind, unknown>;
    const erased = { messages: 0, otps: 0, campaign_recipients: 0 };
    for (const archive of await archivesOfAccount(db, scope.accountId))
      erased[archive.kind] += await rewriteArchive(env, db, archive, erase[archive.kind]);
    if (erased.messages + erased.otps + erased.campaign_recipients > 0)
      await countErasedArchived(db, scope.id, erased, now);
    return { done: true };
  },
};

/** An OTP as an archive line holds it: the fields that may name the person. */
interface ArchivedOtp {
  to_number?: unknown;
  to_user_id?: unknown;
  verified_number?: unknown;
  verified_contact?: { phone_number?: unknown; user_id?: unknown } | null;
}

/**
 * Archive line `line` (an OTP) erased when it names the person, else `line` itself: each of its
 * addresses that is theirs replaced by its erased form, as the rows phase hashes `to_number`,
 * `verified_number` and `verified_user_id` in D1 (an erased address shows as `to_number`, so
 * `to_user_id` becomes null).
 */
export function erasedOtpLine(line: Record<string, unknown>, scope: ErasureScope) {
  const otp = line as ArchivedOtp;
  const hashOf = (value: unknown) => (typeof value === "string" ? scope.hashes.get(value) : undefined);
  const verified = otp.verified_contact ?? null;
  const addressed = otp.to_number ?? otp.to_user_id;
  const named = [addressed, otp.verified_number, verified?.phone_number, verified?.user_id];
  if (!named.some((value) => hashOf(value) !== undefined)) return line;
  const erased = (value: unknown) => hashOf(value) ?? value ?? null;
  const toHash = hashOf(addressed);
  return {
    ...line,
    to_number: toHash ?? otp.to_number ?? null,
    to_user_id: toHash === undefined ? (otp.to_user_id ?? null) : null,
    verified_number: erased(otp.verified_number),
    verified_contact:
      verified === null
        ? null
        : { phone_number: erased(verified.phone_number), user_id: erased(verified.user_id) },
  };
}

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

/**
 * Archive line `line` (a campaign recipient) erased when its address is the person's, else `line`
 * itself: the address as its erased form (shown as `to_number`) and `variables` null, as the rows
 * phase leaves a started campaign's recipient.
 */
export function erasedRecipientLine(line: Record<string, unknown>, scope: ErasureScope) {
  const address = line.to_number ?? line.to_user_id;
  const hash = typeof address === "string" ? scope.hashes.get(address) : undefined;
  if (hash === undefined) return line;
  return { ...line, to_number: hash, to_user_id: null, variables: null };
}
