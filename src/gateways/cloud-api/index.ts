import type { CloudApiSettings } from "../../config";
import type { HealthReading } from "../../lib/session-health";
import { checkMediaAnswer, IncomingMediaError } from "../../media/incoming";
import {
  type ChatGateway,
  GatewayError,
  type GatewayEvent,
  type LinkState,
  type LookupResult,
  type OutboundMessage,
  type ReadReceipt,
  type SendOutcome,
  type SentQuery,
  type TypingOptions,
  type TypingOutcome,
  unknownNumbers,
} from "../gateway";
import type { GatewayHttp } from "../http";
import {
  type CloudApiNumber,
  graphErrorOf,
  graphHttp,
  NOT_SUPPORTED,
  TOKEN_INVALID,
  TOKEN_INVALID_CODE,
} from "./graph";
import { qualityOf, readNumber } from "./number";
import { markRead } from "./read";
import { sendMessage } from "./send";
import { cloudApiTyping } from "./typing";
import { wabaHoldsNumber } from "./waba";

/*
 * Meta's WhatsApp Cloud API, as its OpenAPI document describes it (github.com/facebook/openapi,
 * business-messaging-api_v23.0.yaml; Graph API `v23.0` by default, `CLOUD_API_VERSION`). A session
 * is a business number Meta already hosts, linked by its ids and an access token: there is no QR,
 * pairing code or connection to keep, so the number is read on create and start, and the session
 * is connected as long as Meta takes its token.
 *
 * One file per job: graph.ts (calling the Graph API as a number, reading its errors), number.ts
 * (reading the number), waba.ts (whether the WABA holds the number), send.ts (sending, Meta's
 * error codes), read.ts (read receipts), typing.ts (the typing indicator), events.ts (webhooks).
 */

export { NOT_SUPPORTED } from "./graph";

/**
 * The Cloud API gateway for one session's business number (`number`, null for an object that
 * holds no session: then every call throws). Lifecycle methods throw a `GatewayError`; `send`
 * answers a {@link SendOutcome}.
 */
export class CloudApiGateway implements ChatGateway {
  readonly name = "cloud_api";

  constructor(
    private readonly settings: CloudApiSettings,
    private readonly number: CloudApiNumber | null,
  ) {}

  /** The number's throughput (number.ts: 80, or 1,000 at Meta's `HIGH` level): sends are paced to it. */
  get maxPerSecond(): number | undefined {
    return this.number?.throughputMps;
  }

  /**
   * Reads the number with the session's token, then confirms with the same token that the
   * session's WABA holds it (waba.ts `wabaHoldsNumber`; docs/security.md, Cloud API numbers):
   * `connected` with its E.164 number and verified name.
   * @throws GatewayError `gateway_credentials_invalid` (permanent, Meta's message) when Meta
   *   refuses the number's id or the token; the same, with `field` {@link WABA_ID_FIELD}, when
   *   Meta refuses to list the WABA's numbers to this token or the WABA does not list the number;
   *   else as `gatewayRequest`.
   */
  async create(_sessionId: string): Promise<LinkState> {
    const number = this.linked();
    const http = await graphHttp(this.settings, number);
    let info: Awaited<ReturnType<typeof readNumber>>;
    try {
      info = await readNumber(http, number.phoneNumberId);
    } catch (error) {
      const graph = graphErrorOf(error);
      if (graph && error instanceof GatewayError && error.permanent) {
        throw new GatewayError("gateway_credentials_invalid", true, error.status, graph.message, error.body);
      }
      throw error;
    }
    await confirmWaba(http, number);
    return {
      status: "connected",
      phoneNumber: info.phoneNumber,
      displayName: info.displayName,
      throughputMps: info.throughputMps,
    };
  }

  /** Reads the number again: as {@link create}. */
  start(sessionId: string): Promise<LinkState> {
    return this.create(sessionId);
  }

  /** @throws GatewayError `not_supported_by_gateway`: a Cloud API number has no QR code. */
  currentQr(_sessionId: string): Promise<string> {
    return Promise.reject(new GatewayError(NOT_SUPPORTED, true));
  }

  /** @throws GatewayError `not_supported_by_gateway`: a Cloud API number has no pairing code. */
  requestPairingCode(_sessionId: string, _phoneNumber: string): Promise<string> {
    return Promise.reject(new GatewayError(NOT_SUPPORTED, true));
  }

  /** Nothing to close: Meta keeps no connection for the session. */
  async disconnect(_sessionId: string): Promise<void> {}

  /** Nothing to remove at Meta: the number stays the business's; the session only forgets it. */
  async remove(_sessionId: string): Promise<void> {}

  /**
   * Marks the contact's message read from the number: read.ts `markRead` (`POST
   * /{Phone-Number-ID}/messages` with `{ messaging_product: "whatsapp", status: "read", message_id }`,
   * Meta's `MarkMessageRequestPayload`). @throws GatewayError as read.ts `markRead`;
   * `cloud_api_number_unknown` without a number, `credentials_unreadable` (permanent) when the
   * sealed token does not open.
   */
  async markRead(_sessionId: string, read: ReadReceipt): Promise<void> {
    const number = this.linked();
    let http: Awaited<ReturnType<typeof graphHttp>>;
    try {
      http = await graphHttp(this.settings, number);
    } catch (error) {
      throw new GatewayError("credentials_unreadable", true, null, String(error));
    }
    await markRead(http, number.phoneNumberId, read);
  }

  /** Sends from the number (media as a signed link of ours): send.ts `sendMessage`. */
  async send(_sessionId: string, message: OutboundMessage): Promise<SendOutcome> {
    const number = this.linked();
    let http: Awaited<ReturnType<typeof graphHttp>>;
    try {
      http = await graphHttp(this.settings, number);
    } catch (error) {
      return { outcome: "rejected", reason: `credentials_unreadable: ${String(error)}`, retryable: false };
    }
    return sendMessage(http, number.phoneNumberId, message, {
      publicUrl: this.settings.publicUrl,
      secret: this.settings.mediaUrlSecret,
    });
  }

  /**
   * The Graph API cannot look a sent message up: a lost answer is settled by the status webhook
   * that carries our id in `biz_opaque_callback_data` (delivery/receipts.ts). Until
   * `CLOUD_API_SETTLE_SECONDS` after the first attempt (`since`), as of the question's time
   * (`asOf`), the question is `unreachable`, to be asked again exactly then (`askAt`, not the
   * settlement's backoff, which could ask up to 15 minutes late); after that, no status came, so
   * Meta does not hold it: `absent`, and it is sent again, with the same `biz_opaque_callback_data`.
   */
  async lookup(_sessionId: string, query: SentQuery): Promise<LookupResult> {
    const settledAt = query.since + this.settings.settleSeconds * 1000;
    if ((query.asOf ?? Date.now()) < settledAt) {
      return { result: "unreachable", reason: "awaiting_status_webhook", askAt: settledAt };
    }
    return { result: "absent" };
  }

  /**
   * Unknown (null) for every number: the Cloud API has no way to ask whether a number is on
   * WhatsApp. The On-Premises API's `/v1/contacts` node once did, and Meta repurposed it (from
   * v2.43) to answer `valid` for any number ("Contacts", developers.facebook.com/docs/whatsapp/
   * on-premises/reference/contacts); the Cloud API has no such node. A number not on WhatsApp
   * shows only when Meta refuses a send to it. No call is made.
   */
  async checkNumbers(_sessionId: string, numbers: string[]): Promise<Map<string, boolean | null>> {
    return unknownNumbers(numbers);
  }

  /**
   * The number as Meta sees it now: `linked` while Meta takes the token, `failed` with reason
   * `token_invalid` once it refuses it (error 190).
   * @throws GatewayError for a call that failed otherwise.
   */
  async check(_sessionId: string): Promise<GatewayEvent | null> {
    const number = this.linked();
    try {
      const info = await readNumber(await graphHttp(this.settings, number), number.phoneNumberId);
      return { type: "linked", phoneNumber: info.phoneNumber, displayName: info.displayName, at: Date.now() };
    } catch (error) {
      if (graphErrorOf(error)?.code === TOKEN_INVALID_CODE) {
        return { type: "failed", reason: TOKEN_INVALID, at: Date.now() };
      }
      throw error;
    }
  }

  /**
   * The number's quality as Meta rates it (`PhoneNumberInfo.quality_rating`: GREEN, YELLOW, RED;
   * NA, not yet rated, is null; docs/sessions.md, Session health). Meta puts no timelock or cap on new
   * chats of a business number (its messaging limits are per template conversation), so those
   * are not told. @throws GatewayError for a failed read.
   */
  async health(_sessionId: string): Promise<HealthReading> {
    const number = this.linked();
    const info = await readNumber(await graphHttp(this.settings, number), number.phoneNumberId);
    return { quality: qualityOf(info.qualityRating) };
  }

  /**
   * `start`: the typing indicator in reply to the contact's latest message to the number
   * ({@link cloudApiTyping}; none stored → not shown); `stop` makes no call (Meta ends it at the send).
   */
  async typing(
    _sessionId: string,
    _to: string,
    state: "start" | "stop",
    options: TypingOptions,
  ): Promise<TypingOutcome> {
    if (state === "stop") return { shown: true };
    try {
      const number = this.linked();
      return cloudApiTyping(
        await graphHttp(this.settings, number),
        number.phoneNumberId,
        await options.lastIncomingId(),
      );
    } catch (error) {
      return { shown: false, reason: error instanceof Error ? error.message : String(error) };
    }
  }

  private linked(): CloudApiNumber {
    if (!this.number) throw new GatewayError("cloud_api_number_unknown", true, null, "no number is linked");
    return this.number;
  }

  /**
   * An incoming message's media, `ref` its media id (Meta, Cloud API reference, Media: "Retrieve
   * Media URL" and "Download Media"): `GET /{version}/{media id}` with the number's token answers
   * `{ messaging_product, url, mime_type, sha256, file_size, id }`, and the `url` (https, valid
   * for 5 minutes) is downloaded with the same token as Bearer.
   * @throws IncomingMediaError `not_supported` without a number; `http_error` for an answer without
   *   an https `url`; else as `checkMediaAnswer`.
   */
  async openIncomingMedia(_sessionId: string, ref: string, signal: AbortSignal): Promise<Response> {
    if (!this.number)
      throw new IncomingMediaError("not_supported", "the session has no business number.", true);
    const http = await graphHttp(this.settings, this.number);
    const info = await checkMediaAnswer(
      await mediaFetch(`${http.baseUrl}/${encodeURIComponent(ref)}`, http.headers, signal),
      "the Graph API",
    );
    const answer = (await info.json().catch(() => null)) as { url?: unknown; mime_type?: unknown } | null;
    const url = typeof answer?.url === "string" && URL.canParse(answer.url) ? new URL(answer.url) : null;
    if (url?.protocol !== "https:")
      throw new IncomingMediaError("http_error", "the Graph API answered no https media url.", false);
    return checkMediaAnswer(await mediaFetch(url.href, http.headers, signal), url.host);
  }
}

/** The create request's field a WABA that does not hold the number is refused under. */
export const WABA_ID_FIELD = "cloud_api.waba_id";

/**
 * Confirms that `number`'s WABA holds it, asking Meta with the number's own token (`http`), so a
 * session receives a WABA's webhooks (its template status updates) only when that WABA is its
 * number's (docs/security.md, Cloud API numbers).
 * @throws GatewayError `gateway_credentials_invalid` with `field` {@link WABA_ID_FIELD} (permanent)
 *   when Meta refuses to list the WABA's numbers to the token (Meta's message) or does not list
 *   the number; a transient GatewayError when Meta cannot be reached.
 */
async function confirmWaba(http: GatewayHttp, number: CloudApiNumber): Promise<void> {
  let held: boolean;
  try {
    held = await wabaHoldsNumber(http, number.wabaId, number.phoneNumberId);
  } catch (error) {
    const graph = graphErrorOf(error);
    if (graph && error instanceof GatewayError && error.permanent) {
      const detail = `Meta refused to list the numbers of WhatsApp Business Account ${number.wabaId}: ${graph.message}`;
      throw new GatewayError(
        "gateway_credentials_invalid",
        true,
        error.status,
        detail,
        error.body,
        WABA_ID_FIELD,
      );
    }
    throw error;
  }
  if (!held) {
    const detail = `WhatsApp Business Account ${number.wabaId} does not hold phone number ${number.phoneNumberId}`;
    throw new GatewayError("gateway_credentials_invalid", true, null, detail, null, WABA_ID_FIELD);
  }
}

/** A GET of `url` with `headers`; a failure to reach it is an `unreachable` IncomingMediaError. */
async function mediaFetch(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Response> {
  try {
    return await fetch(url, { headers, signal });
  } catch {
    throw new IncomingMediaError("unreachable", `${new URL(url).host} could not be reached.`, false);
  }
}
