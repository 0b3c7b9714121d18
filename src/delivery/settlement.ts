import { readConfig } from "../config";
import type { Db } from "../db/client";
import { databaseFor } from "../db/databases";
import { recordRetry } from "../db/queries/messages";
import { carriesClientId, clientMessageIdOf } from "../gateways/client-id";
import type { ChatGateway, LookupResult } from "../gateways/gateway";
import { log } from "../lib/log";
import { redactReason } from "../lib/redact";
import type { DispatchHost } from "./host";
import { mediaOf, type OutboxItem, quotedOf } from "./outbox";
import type { Receipt } from "./receipts";
import { MAX_SEND_ATTEMPTS } from "./retry";

/** The longest wait between two questions about an unknown outcome while the gateway cannot answer. */
const SETTLE_BACKOFF_CAP_MS = 15 * 60_000;

/** What the settlement needs of the Dispatcher that owns it. */
export interface SettlementOwner {
  /** Fails entries that will not be sent, with `reason`, and writes them to D1 (refunded). */
  fail(items: Pick<OutboxItem, "id">[], reason: string): Promise<void>;
  /** Fails the waiting entries of cancelled campaigns (`campaign_cancelled`). */
  failCancelled(): Promise<void>;
  /** The gateway holds message `id` since `at` (epoch ms): what follows a send's acceptance. */
  sentAt(id: string, at: number): void;
}

/**
 * Settling sends whose outcome is unknown (docs/exactly-once.md, "Exactly once"): a send that may or may not
 * have reached the gateway is neither sent again nor failed on a guess; the gateway is asked
 * ({@link settle}) or a receipt proves it sent ({@link takeReceipts}).
 */
export class Settlement {
  constructor(
    private readonly host: DispatchHost,
    private readonly env: Env,
    private readonly owner: SettlementOwner,
  ) {}

  /**
   * Settles the entries whose last call's outcome is unknown and due to be asked about at `now`
   * (the logical now, see Dispatcher.run): the gateway's {@link ChatGateway.lookup} finds the message
   * (→ sent, `settled_by: "lookup"`), or answers that it does not hold it (→ sent again, with the
   * same client id; after {@link MAX_SEND_ATTEMPTS} calls it fails `retries_exhausted` and is
   * refunded, which is safe since the gateway confirmed it absent), or cannot be asked (→ asked
   * again at the time the gateway names (LookupResult `askAt`: the Cloud API's
   * `CLOUD_API_SETTLE_SECONDS` after the first call), else with backoff, until
   * `OUTCOME_SETTLE_HOURS` after the first call, then failed
   * `outcome_unknown` and refunded: the one path on which a delivered message can be refunded).
   * One confirmed absent whose campaign was cancelled fails `campaign_cancelled` instead.
   * A lookup is asked no sooner than `OUTCOME_GRACE_SECONDS` after the call it settles.
   */
  async settle(items: OutboxItem[], now: number): Promise<void> {
    const { outbox, deadlines } = this.host;
    const session = this.host.session();
    if (!session) return;
    const gateway = this.host.gateway();
    const config = readConfig(this.env);
    const graceMs = config.OUTCOME_GRACE_SECONDS * 1000;
    const db = await databaseFor(this.env, session.accountId);
    for (const item of items) {
      const lastCall = item.attempted_at ?? 0;
      const since = item.first_attempt_at ?? lastCall;
      if (now < lastCall + graceMs) {
        outbox.markUnknown(item.id, lastCall + graceMs);
        continue;
      }
      const query = {
        id: item.id,
        clientMessageId: clientMessageIdOf(item.id),
        to: item.to_number,
        type: item.type,
        content: item.content,
        mediaUrl: item.media_url,
        media: mediaOf(item),
        replyTo: quotedOf(item),
        since,
        asOf: now,
      };
      const found = await this.host.exclusive(() =>
        gateway
          .lookup(session.sessionId, query)
          .catch((error: unknown): LookupResult => ({ result: "unreachable", reason: String(error) })),
      );
      const at = Date.now();
      const note = (outcome: "absent" | "unreachable", reason: string, nextAttemptAt: number | null) =>
        noteAttempt(db, item.id, { attempts: item.attempts, error: reason, nextAttemptAt, at, outcome });
      if (found.result === "found") {
        outbox.markSent(item.id, at, found.providerMessageId, "lookup");
        this.owner.sentAt(item.id, at);
      } else if (found.result === "absent" && item.attempts >= MAX_SEND_ATTEMPTS) {
        await note("absent", "absent", null);
        await this.owner.fail([item], "retries_exhausted");
      } else if (found.result === "absent") {
        outbox.markRetry(item.id, now);
        await note("absent", "absent", now);
      } else if (now >= since + config.OUTCOME_SETTLE_HOURS * 3_600_000) {
        await note("unreachable", redactReason(found.reason, item.content), null);
        await this.owner.fail([item], "outcome_unknown");
      } else {
        // Ask again when the gateway says it can answer (the Cloud API: CLOUD_API_SETTLE_SECONDS
        // after the first call), else after as long again as it has been unknown: 30 s, 1 min,
        // 2 min … up to the cap.
        const backoff = now + Math.min(Math.max(now - since, graceMs), SETTLE_BACKOFF_CAP_MS);
        const askAt = found.askAt !== undefined ? Math.max(found.askAt, now) : backoff;
        outbox.markUnknown(item.id, askAt);
        deadlines.schedule("dispatch", "", askAt);
      }
    }
    // A message confirmed absent whose campaign was cancelled meanwhile is not sent again.
    await this.owner.failCancelled();
  }

  /**
   * Receipts a gateway reported (src/sessions/session-link.ts): one that names an entry whose
   * outcome is unknown, by our message id (`messageId`: the Cloud API echoes it as
   * `biz_opaque_callback_data`) or by a provider id that carries the entry's client id
   * (carriesClientId), proves that entry sent: it is settled with the receipt's provider id,
   * `settled_by: "status_webhook"`. While any outcome stays unknown, receipts are
   * also kept ({@link KeptReceipts}): the settlement of a message whose id carries no client id
   * (WAHA's media) finds the receipts that arrived before it. Call Dispatcher.flush after: it
   * applies kept receipts with the outcomes they belong to.
   * @returns the receipts to apply now (all but those of entries settled here).
   */
  takeReceipts(receipts: Receipt[], now: number): Receipt[] {
    const { outbox } = this.host;
    const unknown = outbox.unsettled();
    if (unknown.length === 0) return receipts;
    const applyNow: Receipt[] = [];
    for (const receipt of receipts) {
      this.host.receipts.keep(receipt, now);
      const entry = unknown.find(
        (e) =>
          receipt.messageId === e.id || carriesClientId(receipt.providerMessageId, clientMessageIdOf(e.id)),
      );
      if (!entry) applyNow.push(receipt);
      else if (entry.state === "unknown") {
        outbox.markSent(entry.id, now, receipt.providerMessageId, "status_webhook");
        entry.state = "sent";
      }
    }
    return applyNow;
  }
}

/**
 * Shows a failed attempt in the message's metadata. Only informative (the outbox holds the
 * attempt), so a D1 write that fails is logged, not retried.
 */
export async function noteAttempt(
  db: Db,
  id: string,
  attempt: Parameters<typeof recordRetry>[2],
): Promise<void> {
  try {
    await recordRetry(db, id, attempt);
  } catch (error) {
    log.error("attempt_note_failed", { message_id: id, error });
  }
}
