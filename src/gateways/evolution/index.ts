import type { GatewaySettings } from "../../config";
import { base64MediaAnswer, IncomingMediaError } from "../../media/incoming";
import type {
  ChatGateway,
  ChatMessageRef,
  GatewayEvent,
  LinkState,
  LookupResult,
  OutboundMessage,
  ReadReceipt,
  SendOutcome,
  SentQuery,
  TypingOptions,
  TypingOutcome,
} from "../gateway";
import type { GatewayHttp } from "../http";
import { reactionLookup } from "../reaction";
import { deleteMessage, editMessage } from "./chat-actions";
import { checkNumbers } from "./contacts";
import {
  checkInstance,
  createInstance,
  currentQr,
  deleteInstance,
  logoutInstance,
  requestPairingCode,
  startInstance,
} from "./link";
import { lookupMessage } from "./lookup";
import { markRead } from "./read";
import { sendMessage } from "./send";
import { evolutionTyping } from "./typing";

/*
 * Evolution API v2 (EvolutionAPI/evolution-api, https://doc.evolution-api.com/v2) with the
 * WhatsApp Web (Baileys) channel. Every call carries the global key in the `apikey` header
 * (src/api/guards/auth.guard.ts in that repository); each file names the sources of its part.
 *
 * One file per job: link.ts (the instance's lifecycle: create, connect, pairing code, logout,
 * delete, check), send.ts (sending a message under our client message id), lookup.ts (asking
 * whether a message was stored, to settle an unknown send), contacts.ts (asking whether numbers
 * are on WhatsApp), read.ts (read receipts), chat-actions.ts (deleting and editing a sent
 * message), events.ts (the webhook: the instance token that authenticates it, and parsing),
 * errors.ts (reading Evolution's error bodies, for link.ts, send.ts and chat-actions.ts).
 */

/**
 * The Evolution API gateway. The Evolution instance is named after our session (`session_<uuid>`)
 * and its token is `evolutionInstanceToken` (events.ts), so the events route can authenticate
 * webhook bodies without storage (`verifyEvolutionEvent`). Lifecycle methods throw a
 * `GatewayError`; `send` answers a {@link SendOutcome}.
 */
export class EvolutionGateway implements ChatGateway {
  readonly name = "evolution";
  private readonly http: GatewayHttp;

  constructor(private readonly settings: Extract<GatewaySettings, { kind: "evolution" }>) {
    this.http = {
      baseUrl: settings.url,
      headers: { apikey: settings.apiKey },
      timeoutMs: settings.timeoutMs,
      mediaTimeoutMs: settings.mediaTimeoutMs,
    };
  }

  /** Creates the instance with its token and webhook: {@link createInstance}. */
  create(sessionId: string): Promise<LinkState> {
    return createInstance(this.http, sessionId, this.settings);
  }

  /** Connected when open, else the QR: {@link startInstance}. */
  start(sessionId: string): Promise<LinkState> {
    return startInstance(this.http, sessionId);
  }

  /** The QR payload of `connect`: {@link currentQr}. */
  currentQr(sessionId: string): Promise<string> {
    return currentQr(this.http, sessionId);
  }

  /** A pairing code for `phoneNumber` (E.164): {@link requestPairingCode}. */
  requestPairingCode(sessionId: string, phoneNumber: string): Promise<string> {
    return requestPairingCode(this.http, sessionId, phoneNumber);
  }

  /** Logs the instance out, which unlinks the phone (Evolution cannot keep it): {@link logoutInstance}. */
  disconnect(sessionId: string): Promise<void> {
    return logoutInstance(this.http, sessionId);
  }

  /** Deletes the instance, logging it out first when open: {@link deleteInstance}. */
  remove(sessionId: string): Promise<void> {
    return deleteInstance(this.http, sessionId);
  }

  /**
   * Marks the contact's message read: `POST /chat/markMessageAsRead/{instance}` with its Baileys
   * key (read.ts `markRead`). @throws GatewayError as read.ts `markRead`.
   */
  markRead(sessionId: string, read: ReadReceipt): Promise<void> {
    return markRead(this.http, sessionId, read);
  }

  /**
   * Deletes a message the session sent for everyone: `DELETE
   * /chat/deleteMessageForEveryone/{instance}` with its Baileys key (chat-actions.ts
   * `deleteMessage`). @throws GatewayError as chat-actions.ts `deleteMessage`.
   */
  deleteMessage(sessionId: string, target: ChatMessageRef): Promise<void> {
    return deleteMessage(this.http, sessionId, target);
  }

  /**
   * Edits a text the session sent: `POST /chat/updateMessage/{instance}` (chat-actions.ts
   * `editMessage`). @throws GatewayError as chat-actions.ts `editMessage`.
   */
  editMessage(sessionId: string, target: ChatMessageRef, text: string): Promise<void> {
    return editMessage(this.http, sessionId, target, text);
  }

  /** Sends one message (media as a signed link of ours): {@link sendMessage}. */
  send(sessionId: string, message: OutboundMessage): Promise<SendOutcome> {
    return sendMessage(this.http, sessionId, message, {
      publicUrl: this.settings.publicUrl,
      secret: this.settings.mediaUrlSecret,
    });
  }

  /**
   * `start`: `POST /chat/sendPresence/{instance}`, which shows "typing…" for `options.ms` and
   * ends it itself ({@link evolutionTyping}); `stop` makes no call.
   */
  async typing(
    sessionId: string,
    to: string,
    state: "start" | "stop",
    options: TypingOptions,
  ): Promise<TypingOutcome> {
    if (state === "stop") return { shown: true };
    return evolutionTyping(this.http, sessionId, to, options.ms);
  }

  /** Whether each number is on the network (One call for them all): {@link checkNumbers}. */
  checkNumbers(sessionId: string, numbers: string[]): Promise<Map<string, boolean | null>> {
    return checkNumbers(this.http, sessionId, numbers);
  }

  /** Whether the instance holds a message we sent: {@link lookupMessage}; a reaction, {@link reactionLookup}. */
  lookup(sessionId: string, query: SentQuery): Promise<LookupResult> {
    return Promise.resolve(reactionLookup(query) ?? lookupMessage(this.http, sessionId, query));
  }

  /** The instance's connection state as an event: {@link checkInstance}. */
  check(sessionId: string): Promise<GatewayEvent | null> {
    return checkInstance(this.http, sessionId);
  }

  /**
   * An incoming message's media, `ref` its message id: `POST /chat/getBase64FromMediaMessage/{instance}`
   * with `{ message: { key: { id } } }` (EvolutionAPI/evolution-api v2, src/api/routes/chat.router.ts and
   * `getBase64FromMediaMessageDto` of src/api/dto/chat.dto.ts), which answers 201
   * `{ mediaType, fileName, caption, size, mimetype, base64, buffer }` (the Baileys channel's
   * `getBase64FromMediaMessage`; Evolution finds the message in its own store). The JSON is read
   * as it streams and `base64` decoded as it arrives (src/media/incoming.ts `base64MediaAnswer`),
   * into a response of the bytes with the answer's `mimetype`, never held whole.
   * @throws IncomingMediaError as `base64MediaAnswer`.
   */
  async openIncomingMedia(sessionId: string, ref: string, signal: AbortSignal): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(
        `${this.settings.url.replace(/\/+$/, "")}/chat/getBase64FromMediaMessage/${encodeURIComponent(sessionId)}`,
        {
          method: "POST",
          headers: { apikey: this.settings.apiKey, "Content-Type": "application/json" },
          body: JSON.stringify({ message: { key: { id: ref } } }),
          signal,
        },
      );
    } catch {
      throw new IncomingMediaError("unreachable", "Evolution API could not be reached.", false);
    }
    return base64MediaAnswer(response);
  }
}
