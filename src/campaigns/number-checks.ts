import type { Condition, Db, Statement } from "../db/client";
import { recipientSeqIn } from "../db/queries/campaigns";
import { findSessions } from "../db/queries/sessions";
import type { CampaignRow } from "../db/schema";
import { isPhoneAddress } from "../lib/contact-identity";
import { checkNumbers } from "../number-checks/check";
import { settleRecipientsStatements } from "./remainder";

/** The reason a recipient not on the chat network is skipped with (the sandbox's and gateways' send refusal too). */
export const NOT_ON_CHATAPP = "recipient_not_on_chatapp";

/**
 * Of a step's recipients (src/campaigns/materialise.ts), the `seq`s of those a `check_numbers`
 * campaign skips: recipients still `pending` whose number is not on the chat network, by
 * number-checks/check.ts `checkNumbers` (the account's 7-day cache first, then the gateway through the
 * campaign's `connected` sessions, 100 numbers a call, in turn). A number the gateway cannot tell
 * about (null), or that no connected session can ask about, is sent. A recipient known by a user
 * id is not checked: the network gave the id, so the user is on it (docs/contacts.md, Contacts). Empty for a
 * campaign without `check_numbers`. Never throws for a session or gateway failure.
 */
export async function recipientsNotOnChatapp(
  env: Env,
  db: Db,
  campaign: Pick<CampaignRow, "accountId" | "sessionIds" | "checkNumbers">,
  step: { seq: number; to_number: string; status: string }[],
  now: number,
): Promise<Set<number>> {
  const pending = step.filter((r) => r.status === "pending" && isPhoneAddress(r.to_number));
  if (!campaign.checkNumbers || pending.length === 0) return new Set();
  const connected = new Set(
    (await findSessions(db, campaign.accountId, campaign.sessionIds))
      .filter((s) => s.status === "connected")
      .map((s) => s.id),
  );
  const askers = campaign.sessionIds.filter((id) => connected.has(id));
  const checks = await checkNumbers(
    env,
    db,
    campaign.accountId,
    askers,
    pending.map((r) => r.to_number),
    now,
    "unknown",
  );
  return new Set(pending.filter((r) => checks.get(r.to_number)?.onChatapp === false).map((r) => r.seq));
}

/**
 * The statements that skip campaign `campaign`'s recipients `seqs` still `pending` (reason
 * {@link NOT_ON_CHATAPP}) while `active` (a condition on the batch, e.g. that this step made its
 * messages) holds, and refund them as a cancel refunds the recipients whose message was not made
 * (src/campaigns/remainder.ts {@link settleRecipientsStatements}). The start charged them (it
 * cannot wait for a gateway to answer about 100,000 numbers); this undoes that charge in the batch
 * that skips them, so none is charged in the end. A step that runs twice refunds once.
 */
export function skipNotOnChatappStatements(
  campaign: { id: string; accountId: string },
  seqs: number[],
  active: Condition,
  now: number,
): Statement[] {
  if (seqs.length === 0) return [];
  return settleRecipientsStatements(
    campaign,
    recipientSeqIn(seqs),
    active,
    { status: "skipped", reason: NOT_ON_CHATAPP },
    now,
  );
}
