import type { GatewaySettings } from "../../config";
import type { ContactIdentity } from "../../lib/contact-identity";
import type { HealthReading } from "../../lib/session-health";
import { checkMediaAnswer, IncomingMediaError } from "../../media/incoming";
import type {
  ChatGateway,
  ChatMessageRef,
  GatewayEvent,
  LinkState,
  LookupResult,
  OutboundMessage,
  SendOutcome,
  SentQuery,
  TypingOutcome,
} from "../gateway";
import type { GatewayHttp } from "../http";
import { reactionLookup } from "../reaction";
import { deleteMessage, editMessage, markRead } from "./chat-actions";
import { checkNumbers } from "./contacts";
import { readHealth } from "./health";
import { phoneOfLid } from "./lids";
import {
  checkSession,
  createSession,
  currentQr,
  DEFAULT_START_WAIT,
  removeSession,
  requestPairingCode,
  type StartWait,
  startSession,
  stopSession,
} from "./link";
import { lookupMessage } from "./lookup";
import { sendMessage } from "./send";
import { wahaTyping } from "./typing";

/*
 * WAHA (devlikeapro/waha) HTTP API, as documented at https://waha.devlike.pro/docs/how-to/ (source:
 * github.com/devlikeapro/waha-docs, content/docs/how-to/*). Schemas pick only the fields used here and
 * let the rest through, so a change elsewhere in a response does not break us; a missing or
 * mistyped field makes the call a transient `gateway_bad_response`.
 *
 * One file per job: link.ts (the session's lifecycle: create, start, QR, pairing code, stop,
 * remove, check), send.ts (sending a message), lookup.ts (asking whether a message was sent, to
 * settle an unknown send), contacts.ts (asking whether numbers are on the network), lids.ts (the
 * phone number behind a LID), events.ts
 * (the webhook: signature and parsing), session.ts (session statuses and the linked account,
 * shared by link.ts and events.ts).
 */

/**
 * The WAHA gateway. The WAHA session name is our session id (`session_<uuid>`); every call sends the
 * API key as `X-Api-Key` ("Security → API Key") and times out after `settings.timeoutMs`.
 * Lifecycle methods throw a `GatewayError`; `send` answers a {@link SendOutcome}.
 */
export class WahaGateway implements ChatGateway {
  readonly name = "waha";
  private readonly http: GatewayHttp;

  constructor(
    private readonly settings: Extract<GatewaySettings, { kind: "waha" }>,
    /** How create and start poll for the session to leave STARTING; tests shorten it. */
    private readonly startWait: StartWait = DEFAULT_START_WAIT,
  ) {
    this.http = {
      baseUrl: settings.url,
      headers: { "X-Api-Key": settings.apiKey },
      timeoutMs: settings.timeoutMs,
      mediaTimeoutMs: settings.mediaTimeoutMs,
    };
  }

  /** Creates and starts the session with its webhook, then waits for it: {@link createSession}. */
  create(sessionId: string): Promise<LinkState> {
    return createSession(this.http, sessionId, this.settings, this.startWait);
  }

  /** Starts the session, then waits for it: {@link startSession}. */
  start(sessionId: string): Promise<LinkState> {
    return startSession(this.http, sessionId, this.startWait);
  }

  /** The raw QR payload: {@link currentQr}. */
  currentQr(sessionId: string): Promise<string> {
    return currentQr(this.http, sessionId);
  }

  /** A pairing code for `phoneNumber` (E.164): {@link requestPairingCode}. */
  requestPairingCode(sessionId: string, phoneNumber: string): Promise<string> {
    return requestPairingCode(this.http, sessionId, phoneNumber);
  }

  /** Stops the session, keeping the link: {@link stopSession}. */
  disconnect(sessionId: string): Promise<void> {
    return stopSession(this.http, sessionId);
  }

  /** Logs the session out and deletes it: {@link removeSession}. */
  remove(sessionId: string): Promise<void> {
    return removeSession(this.http, sessionId);
  }

  /** `POST /api/sendSeen` (chat-actions.ts `markRead`). */
  markRead(sessionId: string, read: ChatMessageRef): Promise<void> {
    return markRead(this.http, sessionId, read);
  }

  /** `DELETE` of the message (chat-actions.ts `deleteMessage`). */
  deleteMessage(sessionId: string, target: ChatMessageRef): Promise<void> {
    return deleteMessage(this.http, sessionId, target);
  }

  /** `PUT` of the message's new text (chat-actions.ts `editMessage`). */
  editMessage(sessionId: string, target: ChatMessageRef, text: string): Promise<void> {
    return editMessage(this.http, sessionId, target, text);
  }

  /** Looks the number up, then sends (media as a signed link of ours): {@link sendMessage}. */
  send(sessionId: string, message: OutboundMessage): Promise<SendOutcome> {
    return sendMessage(this.http, sessionId, message, {
      publicUrl: this.settings.publicUrl,
      secret: this.settings.mediaUrlSecret,
    });
  }

  /** `POST /api/startTyping` or `/api/stopTyping`: {@link wahaTyping}. */
  typing(sessionId: string, to: string, state: "start" | "stop"): Promise<TypingOutcome> {
    return wahaTyping(this.http, sessionId, to, state);
  }

  /** Whether each number is on the network (One `check-exists` call per number, a few at a time): {@link checkNumbers}. */
  checkNumbers(sessionId: string, numbers: string[]): Promise<Map<string, boolean | null>> {
    return checkNumbers(this.http, sessionId, numbers);
  }

  /** Whether the session holds a message we sent: {@link lookupMessage}; a reaction, {@link reactionLookup}. */
  lookup(sessionId: string, query: SentQuery): Promise<LookupResult> {
    return Promise.resolve(reactionLookup(query) ?? lookupMessage(this.http, sessionId, query));
  }

  /** The number behind a LID, when WAHA knows it: {@link phoneOfLid}. */
  resolveUserId(sessionId: string, userId: string): Promise<ContactIdentity | null> {
    return phoneOfLid(this.http, sessionId, userId);
  }

  /** The session's timelock and cap on new chats: {@link readHealth}. */
  health(sessionId: string): Promise<HealthReading> {
    return readHealth(this.http, sessionId);
  }

  /**
   * An incoming message's media: GET `<WAHA_URL><ref>` (`ref` a `/api/files/…` path, events.ts
   * `wahaFileRef`) with the API key ("Receive messages → Media Files").
   * @throws IncomingMediaError as `checkMediaAnswer`; `unreachable` when WAHA cannot be reached.
   */
  async openIncomingMedia(_sessionId: string, ref: string, signal: AbortSignal): Promise<Response> {
    if (!ref.startsWith("/api/files/"))
      throw new IncomingMediaError("refused", "not a WAHA file path.", true);
    let response: Response;
    try {
      response = await fetch(`${this.settings.url.replace(/\/+$/, "")}${ref}`, {
        headers: { "X-Api-Key": this.settings.apiKey },
        signal,
      });
    } catch {
      throw new IncomingMediaError("unreachable", "WAHA could not be reached.", false);
    }
    return checkMediaAnswer(response, "WAHA");
  }

  /** The session's status as an event: {@link checkSession}. */
  check(sessionId: string): Promise<GatewayEvent | null> {
    return checkSession(this.http, sessionId);
  }
}
