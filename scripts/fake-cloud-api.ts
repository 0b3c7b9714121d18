// A local stand-in for Meta's WhatsApp Cloud API (`npm run fake:cloud-api`): an HTTP server that
// answers as graph.facebook.com would (fakes/cloud-api/graph.ts, shapes from Meta's OpenAPI
// document) and posts the webhooks Meta would post, signed with the app secret.
//
// Settings (environment variables, defaults in brackets):
//   FAKE_CLOUD_API_PORT          port to listen on [8790]
//   FAKE_CLOUD_API_WEBHOOK_URL   where webhooks go [http://127.0.0.1:8787/gateway/cloud-api]
//   CLOUD_API_APP_SECRET         app secret of the X-Hub-Signature-256 header [fake-cloud-api-app-secret-0123456789]
//   FAKE_CLOUD_API_TOKEN         the access token [fake-cloud-api-token]
//   FAKE_CLOUD_API_PHONE_NUMBER_ID, FAKE_CLOUD_API_WABA_ID, FAKE_CLOUD_API_DISPLAY_PHONE_NUMBER,
//   FAKE_CLOUD_API_VERIFIED_NAME  the one phone number [100000000000001, 200000000000001,
//                                 +1 555 010 0001, Sandbox Business]
// It is seeded with one APPROVED AUTHENTICATION template, otp_code (en_US): a body
// "{{1}} is your verification code." and a copy-code button (the document's authentication
// template example). Point the service's Graph API base URL at http://127.0.0.1:8790.
//
// Webhooks are posted one at a time, ~300 ms apart (so sent, delivered and read arrive in that
// order), each retried up to 3 times, 1 s apart, when the post is refused or answers non-2xx.
//
// Routes that are not Meta's, to drive the fake by hand (JSON bodies):
//   POST /_fake/templates/{name}/{language}/status  {"status": "APPROVED", "reason"?: "NONE"}
//                                                   moves a template, queues its webhook
//   POST /_fake/incoming   {"from": "15550001234", "text": "hi"}  queues an incoming text message
//   POST /_fake/fail-next  {"code": 131047, "message": "Re-engagement message", "status"?: 400,
//                           "operation"?: "sendMessage" | "getPhoneNumber" | "listTemplates" | "createTemplate"}
//   GET  /_fake/sent       the messages sent so far
// e.g. curl -X POST localhost:8790/_fake/templates/otp_code/en_US/status -d '{"status":"PAUSED"}'

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  FakeGraph,
  type GraphOperation,
  OTP_CODE_TEMPLATE,
  type QueuedWebhook,
} from "../fakes/cloud-api/graph.ts";
import { SIGNATURE_HEADER } from "../fakes/cloud-api/sign.ts";

const env = process.env;
const port = Number(env.FAKE_CLOUD_API_PORT ?? 8790);
const webhookUrl = env.FAKE_CLOUD_API_WEBHOOK_URL ?? "http://127.0.0.1:8787/gateway/cloud-api";
const number = {
  phoneNumberId: env.FAKE_CLOUD_API_PHONE_NUMBER_ID ?? "100000000000001",
  wabaId: env.FAKE_CLOUD_API_WABA_ID ?? "200000000000001",
  displayPhoneNumber: env.FAKE_CLOUD_API_DISPLAY_PHONE_NUMBER ?? "+1 555 010 0001",
  verifiedName: env.FAKE_CLOUD_API_VERIFIED_NAME ?? "Sandbox Business",
  accessToken: env.FAKE_CLOUD_API_TOKEN ?? "fake-cloud-api-token",
};
const WEBHOOK_SPACING_MS = 300;
const RETRIES = 3;
const RETRY_DELAY_MS = 1000;

const graph = new FakeGraph({
  appSecret: env.CLOUD_API_APP_SECRET ?? "fake-cloud-api-app-secret-0123456789",
});
graph.addNumber(number);
graph.addTemplate({ wabaId: number.wabaId, ...OTP_CODE_TEMPLATE });

const OPERATIONS: GraphOperation[] = ["sendMessage", "getPhoneNumber", "listTemplates", "createTemplate"];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The fake's own routes (not Meta's), or undefined when the path is not one of them. */
async function fakeRoute(request: Request): Promise<Response | undefined> {
  const path = new URL(request.url).pathname;
  if (!path.startsWith("/_fake/")) return undefined;
  const parsed: unknown = request.method === "POST" ? await request.json().catch(() => ({})) : {};
  const body: Record<string, unknown> = typeof parsed === "object" && parsed !== null ? { ...parsed } : {};
  const status = /^\/_fake\/templates\/([^/]+)\/([^/]+)\/status$/.exec(path);
  try {
    if (request.method === "POST" && status?.[1] && status[2]) {
      const reason = typeof body.reason === "string" ? body.reason : "NONE";
      graph.setTemplateStatus(
        decodeURIComponent(status[1]),
        decodeURIComponent(status[2]),
        String(body.status),
        reason,
      );
      return Response.json({ ok: true });
    }
    if (request.method === "POST" && path === "/_fake/incoming") {
      const wamid = graph.queueIncoming({
        phoneNumberId: number.phoneNumberId,
        from: String(body.from),
        text: String(body.text),
      });
      return Response.json({ wamid });
    }
    if (request.method === "POST" && path === "/_fake/fail-next") {
      const fault = { code: Number(body.code), message: String(body.message) };
      const operation = OPERATIONS.find((o) => o === body.operation) ?? "sendMessage";
      graph.failNext(typeof body.status === "number" ? { ...fault, status: body.status } : fault, operation);
      return Response.json({ ok: true });
    }
    if (request.method === "GET" && path === "/_fake/sent") return Response.json(graph.sent);
  } catch (error) {
    return Response.json({ error: String(error) }, { status: 400 });
  }
  return Response.json({ error: "not found" }, { status: 404 });
}

/** Node's request as a web Request (the body read whole). */
async function toRequest(req: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i] ?? "", req.rawHeaders[i + 1] ?? "");
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
  });
}

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const request = await toRequest(req);
  const response = (await fakeRoute(request)) ?? (await graph.handle(request));
  if (response.type === "error") {
    // A network failure (FakeGraph.dropNext): the connection closes without an answer.
    res.destroy();
    console.log(`${request.method} ${new URL(request.url).pathname} → dropped`);
    return;
  }
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(body);
  console.log(`${request.method} ${new URL(request.url).pathname} → ${response.status}`);
}

/** A short account of a webhook for the log: what it reports. */
function describe(webhook: QueuedWebhook): string {
  const change = JSON.parse(webhook.body).entry?.[0]?.changes?.[0];
  const value = change?.value ?? {};
  if (value.statuses) return `status ${value.statuses[0].status} ${value.statuses[0].id}`;
  if (value.messages) return `message ${value.messages[0].type} from ${value.messages[0].from}`;
  return `${change?.field} ${value.message_template_name ?? ""} ${value.event ?? ""}`.trim();
}

async function post(webhook: QueuedWebhook): Promise<void> {
  let outcome = "";
  let attempt = 1;
  for (; attempt <= 1 + RETRIES; attempt++) {
    try {
      const response = await fetch(webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json", [SIGNATURE_HEADER]: webhook.signature },
        body: webhook.body,
      });
      outcome = `${response.status}`;
      if (response.ok) break;
    } catch (error) {
      outcome = `refused (${(error as Error).cause ?? error})`;
    }
    if (attempt <= RETRIES) await sleep(RETRY_DELAY_MS);
  }
  const attempts = attempt > 1 ? ` after ${Math.min(attempt, 1 + RETRIES)} attempts` : "";
  console.log(`webhook ${describe(webhook)} → ${webhookUrl}: ${outcome}${attempts}`);
}

/** Posts queued webhooks forever, one at a time, spaced. */
async function postWebhooks(): Promise<never> {
  for (;;) {
    const webhooks = await graph.takeWebhooks();
    for (const webhook of webhooks) {
      await post(webhook);
      await sleep(WEBHOOK_SPACING_MS);
    }
    if (webhooks.length === 0) await sleep(100);
  }
}

createServer((req, res) => {
  serve(req, res).catch((error) => {
    console.error(error);
    if (!res.headersSent) res.writeHead(500).end();
  });
}).listen(port, () => {
  console.log(`Fake WhatsApp Cloud API on http://127.0.0.1:${port} (webhooks to ${webhookUrl})`);
  console.log(
    `  phone number id ${number.phoneNumberId}, WABA id ${number.wabaId}, ${number.displayPhoneNumber} "${number.verifiedName}"`,
  );
  console.log(`  access token ${number.accessToken}; template otp_code (en_US, AUTHENTICATION, APPROVED)`);
});
void postWebhooks();
