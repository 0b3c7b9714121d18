import { HttpResponse, http } from "msw";
import { evolutionInstanceToken } from "../../src/gateways/evolution/events";
import { EVOLUTION_API_KEY, EVOLUTION_URL, PUBLIC_URL } from "../gateway-config";
import { call } from "../helpers";
import { network } from "../network";

type State = "open" | "connecting" | "close";

interface FakeInstance {
  id: string;
  state: State;
  /** The token given at create (`POST /instance/create` `token`). */
  token: string;
  /** The linked phone's JID (`<digits>@s.whatsapp.net`) and WhatsApp name, once a phone linked. */
  ownerJid: string | null;
  profileName: string | null;
  qrCount: number;
  /** The number a `connect` of a `close` instance was started with: its QRs carry a pairing code. */
  pairingNumber: string | null;
  webhook: unknown;
}

/** A message the fake accepted through a send endpoint; `id` is the answer's `key.id`. */
export interface SentMessage {
  id: string;
  instance: string;
  path: string;
  remoteJid: string;
  body: Record<string, unknown>;
}

/**
 * A stand-in for one Evolution API v2 server at its HTTP boundary (shapes from its documented
 * controllers, as in src/gateways/evolution/): instances with their connection state
 * (`open`/`connecting`/`close`), owner and QR codes, pairing codes, logout and delete, and the
 * send endpoints. Every call must carry the global key in `apikey` (401 otherwise); an instance
 * it does not know answers 404, as Evolution's instance guard does. `down` makes every call
 * answer 503. Every request is recorded as `METHOD path?query` in `calls`, with its JSON body in
 * `bodies`.
 */
export class FakeEvolution {
  readonly instances = new Map<string, FakeInstance>();
  readonly calls: string[] = [];
  readonly bodies: { call: string; body: unknown }[] = [];
  readonly sent: SentMessage[] = [];
  down = false;
  private counter = 0;

  /** Registers the fake's handlers on the test network. */
  install(): this {
    const route = (
      method: "get" | "post" | "delete",
      path: string,
      answer: (params: Record<string, string>, body: Record<string, unknown>, url: URL) => Response,
    ) =>
      http[method](`${EVOLUTION_URL}${path}`, async ({ request, params }) => {
        const url = new URL(request.url);
        const label = `${request.method} ${url.pathname}${url.search}`;
        this.calls.push(label);
        const text = request.method === "POST" ? await request.text() : "";
        const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        this.bodies.push({ call: label, body });
        if (this.down) return HttpResponse.json({ error: "unavailable" }, { status: 503 });
        if (request.headers.get("apikey") !== EVOLUTION_API_KEY) {
          return problem(401, "Unauthorized", "Unauthorized");
        }
        return answer(params as Record<string, string>, body, url);
      });
    network.use(
      route("post", "/instance/create", (_p, body) => {
        const name = String(body.instanceName);
        if (this.instances.has(name))
          return problem(403, "Forbidden", [`This name "${name}" is already in use.`]);
        const instance: FakeInstance = {
          id: crypto.randomUUID(),
          state: "connecting",
          token: String(body.token),
          ownerJid: null,
          profileName: null,
          qrCount: 1,
          pairingNumber: null,
          webhook: body.webhook,
        };
        this.instances.set(name, instance);
        return HttpResponse.json(
          {
            instance: {
              instanceName: name,
              instanceId: instance.id,
              integration: "WHATSAPP-BAILEYS",
              webhookWaBusiness: null,
              accessTokenWaBusiness: "",
              status: "created",
            },
            hash: instance.token,
            webhook: { webhookUrl: (body.webhook as { url?: string } | undefined)?.url ?? null },
            websocket: {},
            rabbitmq: {},
            sqs: {},
            settings: { rejectCall: false, msgCall: "", groupsIgnore: false, alwaysOnline: false },
            qrcode: this.qrCode(name, instance),
          },
          { status: 201 },
        );
      }),
      // `connectToWhatsapp`: open → the state; connecting → the current QR; close → starts
      // (with the number for a pairing code) and answers the new QR.
      route("get", "/instance/connect/:name", ({ name = "" }, _b, url) =>
        this.withInstance(name, (instance) => {
          if (instance.state === "open") {
            return HttpResponse.json({ instance: { instanceName: name, state: "open" } });
          }
          if (instance.state === "close") {
            instance.state = "connecting";
            instance.qrCount += 1;
            instance.pairingNumber = url.searchParams.get("number");
          }
          return HttpResponse.json(this.qrCode(name, instance));
        }),
      ),
      route("get", "/instance/connectionState/:name", ({ name = "" }) =>
        this.withInstance(name, (instance) =>
          HttpResponse.json({ instance: { instanceName: name, state: instance.state } }),
        ),
      ),
      route("get", "/instance/fetchInstances", (_p, _b, url) => {
        const name = url.searchParams.get("instanceName") ?? "";
        return this.withInstance(name, (instance) =>
          HttpResponse.json([
            {
              id: instance.id,
              name,
              connectionStatus: instance.state,
              ownerJid: instance.ownerJid,
              profileName: instance.profileName,
              profilePicUrl: null,
              integration: "WHATSAPP-BAILEYS",
              number: null,
              token: instance.token,
              clientName: "evolution_exchange",
              disconnectionReasonCode: null,
              _count: { Message: 0, Contact: 0, Chat: 0 },
            },
          ]),
        );
      }),
      route("delete", "/instance/logout/:name", ({ name = "" }) =>
        this.withInstance(name, (instance) => {
          if (instance.state === "close") {
            return problem(400, "Bad Request", [`The "${name}" instance is not connected`]);
          }
          this.unlink(instance);
          return HttpResponse.json({
            status: "SUCCESS",
            error: false,
            response: { message: "Instance logged out" },
          });
        }),
      ),
      route("delete", "/instance/delete/:name", ({ name = "" }) =>
        this.withInstance(name, (instance) => {
          if (instance.state === "open") {
            return problem(400, "Bad Request", [`The "${name}" instance needs to be disconnected`]);
          }
          this.instances.delete(name);
          return HttpResponse.json({
            status: "SUCCESS",
            error: false,
            response: { message: "Instance deleted" },
          });
        }),
      ),
      ...["sendText", "sendMedia", "sendWhatsAppAudio"].map((endpoint) =>
        route("post", `/message/${endpoint}/:name`, ({ name = "" }, body) =>
          this.withInstance(name, (instance) => {
            if (instance.state !== "open") return problem(400, "Bad Request", ["Error: Connection Closed"]);
            const number = String(body.number);
            const remoteJid = `${number}@s.whatsapp.net`;
            // `sendMessageWithTyping` looks the number up first (`onWhatsApp`).
            if (number.endsWith("0000")) {
              return problem(400, "Bad Request", [{ jid: remoteJid, exists: false, number }]);
            }
            this.counter += 1;
            const id = `BAE5${this.counter.toString(16).toUpperCase().padStart(12, "0")}`;
            this.sent.push({ id, instance: name, path: `/message/${endpoint}/${name}`, remoteJid, body });
            return HttpResponse.json(
              {
                key: { remoteJid, fromMe: true, id },
                pushName: "",
                status: "PENDING",
                message: endpoint === "sendText" ? { conversation: body.text } : {},
                contextInfo: null,
                messageType: endpoint === "sendText" ? "conversation" : "imageMessage",
                messageTimestamp: Math.floor(Date.now() / 1000),
                instanceId: instance.id,
                source: "unknown",
              },
              { status: 201 },
            );
          }),
        ),
      ),
    );
    return this;
  }

  /** The QR payload (`code`) the fake shows for the `n`th QR of instance `name`. */
  qrOf(name: string, n: number): string {
    return `2@fake-qr-${name}-${n},Zm9vYmFy,YmF6cXV4`;
  }

  /** The pairing code Baileys gives instance `name` for `number` (8 characters, as Baileys does). */
  pairingCodeOf(number: string): string {
    return `WZ${number.slice(-6)}`;
  }

  /** The instance `name`, which must exist. */
  instance(name: string): FakeInstance {
    const found = this.instances.get(name);
    if (!found) throw new Error(`fake Evolution has no instance ${name}`);
    return found;
  }

  /**
   * A phone links instance `name` (the state changes; the webhook is posted separately).
   * @returns the `connection.update` data Evolution then sends.
   */
  link(name: string, phone: string, profileName = "Fake Phone") {
    const instance = this.instance(name);
    instance.state = "open";
    instance.ownerJid = `${phone.replace("+", "")}@s.whatsapp.net`;
    instance.profileName = profileName;
    instance.pairingNumber = null;
    return this.connectionUpdate(name, 200);
  }

  /**
   * The connection of instance `name` closes with Baileys `DisconnectReason` `statusReason`
   * (401 loggedOut also unlinks the phone). @returns the `connection.update` data Evolution sends.
   */
  close(name: string, statusReason: number) {
    const instance = this.instance(name);
    if (statusReason === 401) this.unlink(instance);
    else instance.state = "close";
    return this.connectionUpdate(name, statusReason);
  }

  /** `connection.update` data (`connectionUpdate` of the Baileys channel) for the current state. */
  connectionUpdate(name: string, statusReason: number) {
    const instance = this.instance(name);
    return {
      instance: name,
      wuid: instance.ownerJid,
      profileName: instance.profileName,
      profilePictureUrl: null,
      state: instance.state,
      statusReason,
    };
  }

  /** Baileys shows the next QR of instance `name`. @returns the `qrcode.updated` data. */
  rotateQr(name: string) {
    const instance = this.instance(name);
    instance.qrCount += 1;
    const { code, pairingCode, base64 } = this.qrCode(name, instance);
    return { qrcode: { instance: name, pairingCode, code, base64 } };
  }

  /** `messages.update` data for a message the fake sent (`keyId` is its `key.id`). */
  messageUpdate(id: string, status: string) {
    const sent = this.sent.find((s) => s.id === id);
    if (!sent) throw new Error(`fake Evolution sent no message ${id}`);
    return {
      keyId: id,
      remoteJid: sent.remoteJid,
      fromMe: true,
      participant: null,
      status,
      instanceId: this.instance(sent.instance).id,
      messageId: `cm${id.toLowerCase()}`,
    };
  }

  /** `messages.upsert` data (`prepareMessage`) for a text `from` (E.164) sent to instance `name`. */
  incomingText(name: string, id: string, from: string, text: string) {
    return {
      key: { remoteJid: `${from.replace("+", "")}@s.whatsapp.net`, fromMe: false, id },
      pushName: "Bruno",
      status: "DELIVERY_ACK",
      message: { conversation: text },
      contextInfo: null,
      messageType: "conversation",
      messageTimestamp: Math.floor(Date.now() / 1000),
      instanceId: this.instance(name).id,
      source: "android",
    };
  }

  private unlink(instance: FakeInstance): void {
    instance.state = "close";
    instance.ownerJid = null;
    instance.profileName = null;
  }

  /** `wa.QrCode` of the instance's current QR. */
  private qrCode(name: string, instance: FakeInstance) {
    return {
      pairingCode: instance.pairingNumber ? this.pairingCodeOf(instance.pairingNumber) : null,
      code: this.qrOf(name, instance.qrCount),
      base64: "data:image/png;base64,iVBORw0KGgo=",
      count: instance.qrCount,
    };
  }

  private withInstance(name: string, answer: (instance: FakeInstance) => Response): Response {
    const found = this.instances.get(name);
    return found ? answer(found) : problem(404, "Not Found", [`The "${name}" instance does not exist`]);
  }
}

/** Evolution's error body (its src/main.ts): `{ status, error, response: { message } }`. */
function problem(status: number, error: string, message: unknown) {
  return HttpResponse.json({ status, error, response: { message } }, { status });
}

/** Options of an event: its time (epoch ms, as `date_time`), `sender` and `apikey` (null sends null). */
export interface EventOptions {
  at?: number;
  sender?: string | null;
  apikey?: string | null;
}

/**
 * The webhook body Evolution posts for `event` of `instance` (`WebhookController.emit`), with
 * `apikey` the instance's token ({@link evolutionInstanceToken}) unless given.
 */
export async function evolutionEnvelope(
  instance: string,
  event: string,
  data: unknown,
  options: EventOptions = {},
): Promise<Record<string, unknown>> {
  return {
    event,
    instance,
    data,
    destination: `${PUBLIC_URL}/gateway/evolution/events`,
    date_time: new Date(options.at ?? Date.now()).toISOString(),
    sender: options.sender ?? null,
    server_url: EVOLUTION_URL,
    apikey:
      options.apikey === undefined
        ? await evolutionInstanceToken(EVOLUTION_API_KEY, instance)
        : options.apikey,
  };
}

/** Posts an Evolution webhook body ({@link evolutionEnvelope}) to our events endpoint. */
export async function postEvolutionEvent(
  instance: string,
  event: string,
  data: unknown,
  options: EventOptions = {},
) {
  return postEvolutionBody(await evolutionEnvelope(instance, event, data, options));
}

/** Posts `body` as is to our Evolution events endpoint. */
export function postEvolutionBody(body: unknown) {
  return call<{ success: boolean; ignored: boolean }>("POST", "/gateway/evolution/events", { body });
}
