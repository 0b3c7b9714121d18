import { randomToken, timingSafeEqual } from "../lib/crypto";
import { type MediaUrlOptions, mediaUrlProblem } from "../lib/media-url";
import { checkMediaAnswer, IncomingMediaError } from "../media/incoming";
import type {
  ChatGateway,
  ChatMessageRef,
  GatewayEvent,
  LinkState,
  LookupResult,
  NetworkStandIn,
  OutboundMessage,
  OwnReceipts,
  ReceivedMessage,
  ScanOutcome,
  ScanRequest,
  SendOutcome,
  SentQuery,
  TypingOutcome,
} from "./gateway";

/**
 * The embedded sandbox gateway: a stand-in for the chat network that runs inside the session's
 * Durable Object and keeps its state (the current pairing token, the linked phone) in that
 * object's SQLite storage (tables `sandbox_link`, `sandbox_received`, `sandbox_sent` and
 * `sandbox_held_acks`, created with the object's other tables by src/sessions/storage-schema.ts).
 * Its QR payload is a URL, `<origin>/sandbox/pair/<token>`, whose page links the session as a
 * phone's scan would; the `/sandbox` routes drive it from scripts.
 *
 * A pairing code (`requestPairingCode`) links the session too: `POST /sandbox/sessions/{id}/scan`
 * with that code in the body stands in for the phone entering it.
 *
 * Sending follows the recipient's last digits, so every path can be tried (docs/messages.md,
 * Sandbox behaviours):
 * - `…0000`: fails permanently with reason `recipient_not_on_chatapp`;
 * - `…0001`: fails transiently on the first two attempts, then is accepted;
 * - `…0002`: fails transiently on every attempt (retries run out);
 * - in area code 212 only (so that no other number trips them), lost answers:
 *   - `+1212…0003`: the phone receives it, but the first attempt's answer is lost (`unknown`): a
 *     lookup finds it;
 *   - `+1212…0004`: the first attempt fails with a 500 before it reaches the phone (`unknown`): a
 *     lookup finds nothing, and it is sent again;
 *   - `+1212…0006`: the first attempt times out before it reaches the phone (`unknown`), as `…0004`;
 *   - `+1212…0005`: every attempt's answer is lost before the phone receives it, and the sandbox cannot
 *   be asked about it (lookups are `unreachable`): it stays unknown until `OUTCOME_SETTLE_HOURS`;
 * - anything else: accepted, and kept as what the recipient's phone received (the last
 *   {@link PHONE_KEEPS} per recipient, {@link receivedBy}); the session object then acks it
 *   `delivered` after `SANDBOX_DELIVERED_MS` and `read` after `SANDBOX_READ_MS`.
 *
 * A reply or a reaction is received as any message, with the message it quotes or reacts to
 * (`reply_to`, our id); re-sending a reaction whose answer was lost is found by {@link lookup} as
 * any message.
 *
 * Number checks ({@link checkNumbers}) follow the same digits: `…0000` is not on the network (false),
 * `…9999` the sandbox cannot tell (null; sends to it go through as to any number), any other
 * number is on it (true).
 *
 * The phone can be offline ({@link phoneOnline}, `POST /sandbox/sessions/{id}/phone`): messages
 * still reach the sandbox (they end `sent`), but their acks are held ({@link holdAcks}) until it
 * comes back online (sessions/session-stand-in.ts `phone`).
 */
/** The reason the sandbox gives for not showing "typing…" (numbers ending `0007`). */
export const SANDBOX_TYPING_REFUSED = "sandbox_typing_refused";

export class SandboxGateway implements ChatGateway, NetworkStandIn {
  readonly name = "sandbox";
  readonly standIn: NetworkStandIn = this;
  /** Receipts on the {@link RECEIPT_GRID_MS} grid; held while the phone is offline. */
  readonly ownReceipts: OwnReceipts = {
    timesFor: (at) => {
      const onGrid = (ms: number) => Math.ceil((at + ms) / RECEIPT_GRID_MS) * RECEIPT_GRID_MS;
      return { delivered: onGrid(this.receiptDelays.deliveredMs), read: onGrid(this.receiptDelays.readMs) };
    },
    hold: (messageIds, at) => {
      if (this.phoneOnline()) return false;
      this.holdAcks(messageIds, at);
      return true;
    },
  };

  constructor(
    private readonly sql: SqlStorage,
    /** Origin the pairing URL points at, e.g. `http://localhost:8787`. */
    private readonly origin: string,
    /** The session's uuid, embedded in pairing tokens so the pair route can find the session. */
    private readonly sessionUuid: string,
    /**
     * How long after a send the phone acks it `delivered` and `read` (ms; `SANDBOX_DELIVERED_MS`,
     * `SANDBOX_READ_MS`).
     */
    private readonly receiptDelays: { deliveredMs: number; readMs: number },
    /**
     * The deployment's exception to the `media_url` rule for inbound media (`{ allowLocalhost:
     * MEDIA_ALLOW_HTTP_LOCALHOST }`); none when left out.
     */
    private readonly mediaUrlOptions: MediaUrlOptions = {},
  ) {}

  async create(): Promise<LinkState> {
    return this.start();
  }

  async start(): Promise<LinkState> {
    this.sql.exec("DELETE FROM sandbox_link WHERE key = 'stopped'");
    const phoneNumber = this.get("phone_number");
    if (phoneNumber) return { status: "connected", phoneNumber, displayName: this.get("display_name") };
    return { status: "pending", qr: this.rotate() };
  }

  async currentQr(): Promise<string> {
    return this.rotate();
  }

  /** A code in WhatsApp's shape (8 characters, `XXXX-XXXX`), valid for `phoneNumber` only. */
  async requestPairingCode(_sessionId: string, phoneNumber: string): Promise<string> {
    const alphabet = "ABCDEFGHJKLMNPQRSTVWXYZ23456789";
    const raw = Array.from(
      crypto.getRandomValues(new Uint8Array(8)),
      (b) => alphabet[b % alphabet.length],
    ).join("");
    const code = `${raw.slice(0, 4)}-${raw.slice(4)}`;
    this.set("pairing_code", code);
    this.set("pairing_phone", phoneNumber);
    return code;
  }

  async disconnect(): Promise<void> {
    this.set("stopped", "1");
  }

  /** Linked and running, stopped (the link kept), or waiting for a scan. */
  async check(): Promise<GatewayEvent | null> {
    const phoneNumber = this.get("phone_number");
    const at = Date.now();
    if (!phoneNumber) return { type: "qr", qr: this.qrPayload(), at };
    if (this.get("stopped")) return { type: "dropped", reason: "gateway_stopped", loggedOut: false, at };
    return { type: "linked", phoneNumber, displayName: this.get("display_name"), at };
  }

  async remove(): Promise<void> {
    this.sql.exec("DELETE FROM sandbox_link");
  }

  /** A read receipt the contact's phone shows at once: nothing to call, nothing to refuse. */
  async markRead(): Promise<void> {}

  /** The recipient's phone no longer shows the message (`receivedBy` leaves it out); again, nothing changes. */
  async deleteMessage(_sessionId: string, target: ChatMessageRef): Promise<void> {
    this.sql.exec("DELETE FROM sandbox_received WHERE message_id = ?", ourIdOf(target.providerMessageId));
  }

  /** The recipient's phone shows the message's new text. */
  async editMessage(_sessionId: string, target: ChatMessageRef, text: string): Promise<void> {
    this.sql.exec(
      "UPDATE sandbox_received SET content = ? WHERE message_id = ?",
      text,
      ourIdOf(target.providerMessageId),
    );
  }

  async send(_sessionId: string, message: OutboundMessage): Promise<SendOutcome> {
    // Message templates are Meta's (Cloud API sessions only); the send path refuses them elsewhere.
    if (message.type === "template")
      return { outcome: "rejected", reason: "not_supported_by_gateway", retryable: false };
    const to = message.to;
    if (to.endsWith("0000"))
      return { outcome: "rejected", reason: "recipient_not_on_chatapp", retryable: false };
    const transient = { outcome: "rejected", reason: "sandbox_transient_failure", retryable: true } as const;
    if (to.endsWith("0002")) return transient;
    const fault = to.startsWith("+1212") ? to.slice(-4) : null;
    if (fault === "0005") return { outcome: "unknown", reason: "sandbox_answer_lost" };
    // Only the numbers whose behaviour depends on the attempt count theirs.
    const counted = to.endsWith("0001") || fault === "0003" || fault === "0004" || fault === "0006";
    const attempt = counted ? this.countAttempt(message.id) : 0;
    if (to.endsWith("0001") && attempt <= 2) return transient;
    if (fault === "0004" && attempt === 1) return { outcome: "unknown", reason: "gateway_http_500" };
    if (fault === "0006" && attempt === 1) return { outcome: "unknown", reason: "gateway_timeout" };
    this.deliver(message);
    if (fault === "0003" && attempt === 1) return { outcome: "unknown", reason: "sandbox_answer_lost" };
    return { outcome: "accepted", providerMessageId: providerIdOf(message.id) };
  }

  /**
   * Whether the sandbox holds message `query.id` (its client id is ours): `found` once it reached
   * the phone, `absent` if it never did; `+1212…0005` cannot be asked about (`unreachable`).
   */
  async lookup(_sessionId: string, query: SentQuery): Promise<LookupResult> {
    if (query.to.startsWith("+1212") && query.to.endsWith("0005"))
      return { result: "unreachable", reason: "sandbox_unreachable" };
    const sent = this.sql.exec("SELECT 1 FROM sandbox_sent WHERE message_id = ?", query.id).toArray();
    return sent.length > 0
      ? { result: "found", providerMessageId: providerIdOf(query.id) }
      : { result: "absent" };
  }

  /**
   * "Typing…" shown to no one: answered `shown`, but for a number ending `0007`, which plays a
   * gateway refusing it (`sandbox_typing_refused`), so the send after it goes on unshown.
   */
  async typing(_sessionId: string, to: string): Promise<TypingOutcome> {
    return to.endsWith("0007") ? { shown: false, reason: SANDBOX_TYPING_REFUSED } : { shown: true };
  }

  /** Each of `numbers` as {@link sandboxOnNetwork} says; the sandbox is always reachable. */
  async checkNumbers(_sessionId: string, numbers: string[]): Promise<Map<string, boolean | null>> {
    return new Map(numbers.map((number) => [number, sandboxOnNetwork(number)]));
  }

  /**
   * The media of a sandbox inbound message: `ref` is the caller's `media_url`, fetched from the
   * public internet only (the `media_url` rule of lib/media-url.ts: https on port 443, a public
   * host; or `http(s)://localhost` and `http(s)://127.0.0.1` on any port when the deployment sets
   * `MEDIA_ALLOW_HTTP_LOCALHOST`), without following redirects (a redirect is answered as an
   * `http_error`).
   * @throws IncomingMediaError `refused` for a URL outside that rule, else as `checkMediaAnswer`.
   */
  async openIncomingMedia(_sessionId: string, ref: string, signal: AbortSignal): Promise<Response> {
    const problem = mediaUrlProblem(ref, this.mediaUrlOptions);
    if (problem) throw new IncomingMediaError("refused", `media_url ${problem}.`, true);
    const host = new URL(ref).host;
    let response: Response;
    try {
      response = await fetch(ref, { redirect: "manual", signal });
    } catch {
      throw new IncomingMediaError("unreachable", `${host} could not be reached.`, false);
    }
    return checkMediaAnswer(response, host);
  }

  /**
   * The recipient's phone receives `message`, once: the sandbox's message id is derived from ours,
   * so a repeated call for the same message yields the same message and nothing new on the phone.
   */
  private deliver(message: OutboundMessage): void {
    const now = Date.now();
    const fresh = this.sql.exec(
      "INSERT INTO sandbox_sent (message_id, sent_at) VALUES (?, ?) ON CONFLICT (message_id) DO NOTHING",
      message.id,
      now,
    );
    if (fresh.rowsWritten === 0) return;
    this.sql.exec(
      `INSERT INTO sandbox_received (message_id, to_number, type, content, media_url, received_at, reply_to)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (message_id) DO NOTHING`,
      message.id,
      message.to,
      message.type,
      message.content,
      message.mediaUrl,
      now,
      message.replyTo ? ourIdOf(message.replyTo.providerMessageId) : null,
    );
    this.sql.exec(
      `DELETE FROM sandbox_received WHERE to_number = ? AND message_id NOT IN (
         SELECT message_id FROM sandbox_received WHERE to_number = ? ORDER BY received_at DESC, rowid DESC LIMIT ?)`,
      message.to,
      message.to,
      PHONE_KEEPS,
    );
  }

  /**
   * What the phone of `toNumber` (E.164) received from this session, newest first: the messages
   * as the recipient reads them, one-time codes in clear (the `/received` route masks them, as the
   * API shows them everywhere).
   */
  receivedBy(toNumber: string): ReceivedMessage[] {
    return this.sql
      .exec<ReceivedMessage>(
        `SELECT message_id, to_number, type, content, media_url, received_at, reply_to FROM sandbox_received
         WHERE to_number = ? ORDER BY received_at DESC, rowid DESC`,
        toNumber,
      )
      .toArray();
  }

  /** The payload currently shown as QR, or null when none was issued. */
  qrPayload(): string | null {
    const token = this.get("pair_token");
    return token ? pairUrl(this.origin, token) : null;
  }

  /** True when `token` is the token of the QR currently shown (constant-time comparison). */
  private acceptsToken(token: string): boolean {
    const current = this.get("pair_token");
    return current !== null && timingSafeEqual(current, token);
  }

  /**
   * The phone that asked for pairing code `code`, when it is the code last issued (constant-time
   * comparison, case-insensitive), else null.
   */
  private phoneOfPairingCode(code: string): string | null {
    const current = this.get("pairing_code");
    return current !== null && timingSafeEqual(current, code.toUpperCase())
      ? this.get("pairing_phone")
      : null;
  }

  /**
   * A phone scans the QR of the session, or enters its pairing code, and is linked. With
   * `token`, it must be the token of the QR shown now (the pairing page), else `not_found`; with
   * `pairingCode`, the code last issued (the phone is then the one it was issued for), else
   * `pairing_code_invalid`. Without either, whatever QR is shown is linked. The phone defaults to
   * the session's stand-in number ({@link sandboxPhoneNumber}), the display name to
   * `Sandbox <phone>`.
   */
  scan(request: ScanRequest): ScanOutcome {
    if (request.token !== undefined && !this.acceptsToken(request.token)) {
      return { linked: false, code: "not_found", detail: "This QR code has expired; scan the current one." };
    }
    let phoneNumber = request.phoneNumber ?? sandboxPhoneNumber(this.sessionUuid);
    if (request.pairingCode !== undefined) {
      const paired = this.phoneOfPairingCode(request.pairingCode);
      if (!paired)
        return {
          linked: false,
          code: "pairing_code_invalid",
          detail: "This is not the pairing code last issued.",
        };
      phoneNumber = paired;
    }
    const displayName = request.displayName ?? `Sandbox ${phoneNumber}`;
    this.link(phoneNumber, displayName);
    return { linked: true, phoneNumber, displayName };
  }

  /** A phone scanned the QR: the link is now held until the phone logs out or is banned. */
  private link(phoneNumber: string, displayName: string): void {
    this.set("phone_number", phoneNumber);
    this.set("display_name", displayName);
    this.sql.exec("DELETE FROM sandbox_link WHERE key IN ('pair_token', 'pairing_code', 'pairing_phone')");
  }

  /** The phone removed the linked device: the next start needs a new QR. */
  unlink(): void {
    this.sql.exec("DELETE FROM sandbox_link WHERE key IN ('phone_number', 'display_name')");
  }

  /** Whether the phone is online (the default); the state is kept with the link, across restarts. */
  phoneOnline(): boolean {
    return this.get("phone_offline") === null;
  }

  /**
   * Takes the phone offline (`false`) or back online (`true`, answering the messages whose acks
   * were held, oldest first); setting the same state again is harmless.
   */
  setPhoneOnline(online: boolean): string[] {
    if (!online) {
      this.set("phone_offline", "1");
      return [];
    }
    this.sql.exec("DELETE FROM sandbox_link WHERE key = 'phone_offline'");
    return this.releaseHeldAcks();
  }

  /** Holds the acks of messages `messageIds` while the phone is offline: none is applied meanwhile. */
  private holdAcks(messageIds: string[], at: number): void {
    for (const id of messageIds) {
      this.sql.exec(
        "INSERT INTO sandbox_held_acks (message_id, held_at) VALUES (?, ?) ON CONFLICT (message_id) DO NOTHING",
        id,
        at,
      );
    }
  }

  /** The messages whose acks were held, oldest first; they are held no more. */
  private releaseHeldAcks(): string[] {
    return this.sql
      .exec<{ message_id: string; held_at: number }>(
        "DELETE FROM sandbox_held_acks RETURNING message_id, held_at",
      )
      .toArray()
      .sort((a, b) => a.held_at - b.held_at)
      .map((row) => row.message_id);
  }

  private countAttempt(messageId: string): number {
    const key = `attempts:${messageId}`;
    const attempt = Number(this.get(key) ?? "0") + 1;
    this.set(key, String(attempt));
    return attempt;
  }

  private rotate(): string {
    const token = `${this.sessionUuid}.${randomToken(16)}`;
    this.set("pair_token", token);
    return pairUrl(this.origin, token);
  }

  private get(key: string): string | null {
    const row = this.sql
      .exec<{ value: string }>("SELECT value FROM sandbox_link WHERE key = ?", key)
      .toArray()[0];
    return row?.value ?? null;
  }

  private set(key: string, value: string): void {
    this.sql.exec(
      "INSERT INTO sandbox_link (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      key,
      value,
    );
  }
}

/**
 * Whether E.164 `number` is on the sandbox's network: false for `…0000` (a send to it fails
 * `recipient_not_on_chatapp`), null for `…9999` (the sandbox cannot tell), else true.
 */
export function sandboxOnNetwork(number: string): boolean | null {
  if (number.endsWith("0000")) return false;
  if (number.endsWith("9999")) return null;
  return true;
}

/**
 * The sandbox's message id for our message `id`: outgoing messages, and incoming ones the
 * inbound route stores (so a reply or reaction can name either).
 */
export function providerIdOf(id: string): string {
  return `sandbox.${id}`;
}

/** Our message id in a sandbox message id ({@link providerIdOf}); another gateway's id as it is. */
function ourIdOf(providerMessageId: string): string {
  return providerMessageId.replace(/^sandbox\./, "");
}

/** How many received messages the sandbox keeps per recipient phone. */
export const PHONE_KEEPS = 50;

/**
 * The sandbox's receipts fall due on this grid (ms), so that one batch applies all of a second's
 * receipts of a session rather than one batch per message.
 */
const RECEIPT_GRID_MS = 1_000;

/** `<origin>/sandbox/pair/<token>`: the sandbox's QR payload. */
export function pairUrl(origin: string, token: string): string {
  return `${origin}/sandbox/pair/${token}`;
}

/** The session uuid inside a pairing token (`<uuid>.<random>`), or null for a malformed token. */
export function sessionOfPairToken(token: string): string | null {
  const match = token.match(
    /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.[A-Za-z0-9_-]{22}$/,
  );
  return match?.[1] ?? null;
}

/**
 * The sandbox's stand-in phone number for a session linked without one: a stable number in the
 * range NANPA keeps for fiction (555-0100 to 555-0199, here in area code 202), derived from the
 * session id.
 */
export function sandboxPhoneNumber(sessionUuid: string): string {
  let hash = 0;
  for (const char of sessionUuid) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return `+120255501${String(hash % 100).padStart(2, "0")}`;
}
