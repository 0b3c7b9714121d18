import { describe, expect, it } from "vitest";
import { ERROR_STATUS } from "../src/errors";
import { MessageMetadataSchema } from "../src/messages/metadata";
import { call } from "./helpers";

interface Operation {
  operationId?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string }[];
  requestBody?: unknown;
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }>;
}

interface Doc {
  info: { description: string; license?: { name: string }; contact?: { name: string } };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, { type: string }>;
    responses: Record<string, { description: string; content: Record<string, { schema: unknown }> }>;
  };
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

async function document(): Promise<Doc> {
  const res = await call<Doc>("GET", "/openapi.json");
  expect(res.status).toBe(200);
  return res.body;
}

function operations(items: Record<string, Record<string, Operation>>): [string, string, Operation][] {
  return Object.entries(items).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]): [string, string, Operation] => [path, method, operation]),
  );
}

describe("tags and security", () => {
  it("describes every tag an operation names, and names no tag nothing uses", async () => {
    const doc = await document();
    const used = new Set(
      [...operations(doc.paths), ...operations(doc.webhooks)].flatMap(([, , op]) => op.tags ?? []),
    );
    expect(doc.tags.map((t) => t.name).sort()).toEqual([...used].sort());
    expect(doc.tags.every((t) => t.description.length > 0)).toBe(true);
    expect(doc.info.license?.name).toBe("Proprietary");
    expect(doc.info.contact?.name).toEqual(expect.any(String));
  });

  it("states security on every operation: public ones say security: []", async () => {
    const doc = await document();
    const missing = [...operations(doc.paths), ...operations(doc.webhooks)]
      .filter(([, , op]) => op.security === undefined)
      .map(([path, method]) => `${method} ${path}`);
    expect(missing).toEqual([]);
    const open = operations(doc.paths)
      .filter(([, , op]) => op.security?.length === 0)
      .map(([path, method]) => `${method} ${path}`)
      .sort();
    expect(open).toEqual([
      // Meta's webhook: its handshake's verify token and its posts' signature (docs/gateways.md, Webhooks
      // from Meta).
      "get /gateway/cloud-api",
      "get /health",
      // The signed link in its query is the credential (src/media/link.ts).
      "get /media/{key}",
      "get /sandbox/pair/{token}",
      "post /gateway/cloud-api",
      "post /gateway/evolution/events",
      "post /gateway/waha/events",
      "post /sandbox/pair/{token}",
    ]);
  });
});

describe("operation ids", () => {
  it("gives every operation and webhook a unique camelCase operationId", async () => {
    const doc = await document();
    const all = [...operations(doc.paths), ...operations(doc.webhooks)];
    expect(all.length).toBeGreaterThan(60);
    const ids = all.map(([path, method, op]) => {
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z0-9]*$/);
      return op.operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("starts every path operation's id with a verb", async () => {
    const doc = await document();
    const verbs =
      /^(get|list|create|update|replace|delete|send|verify|resend|revoke|credit|watch|request|reconnect|disconnect|check|add|start|pause|resume|cancel|retry|recover|test|rotate|receive|show|scan|drop|ban|pair|run|move|mark)[A-Z]/;
    const others = operations(doc.paths)
      .map(([, , op]) => op.operationId ?? "")
      .filter((id) => !verbs.test(id));
    expect(others).toEqual([]);
  });

  it("names operations after what they do", async () => {
    const doc = await document();
    expect(doc.paths["/v1/chatapp/sessions"]?.get?.operationId).toBe("listSessions");
    expect(doc.paths["/v1/chatapp/sessions"]?.post?.operationId).toBe("createSession");
    expect(doc.paths["/v1/chatapp/messages"]?.post?.operationId).toBe("sendMessage");
    expect(doc.paths["/v1/webhooks/{id}/deliveries"]?.get?.operationId).toBe("listWebhookDeliveries");
    expect(doc.webhooks["message.read"]?.post?.operationId).toBe("onMessageRead");
  });
});

describe("GET /health in the document", () => {
  it("documents both answers, with security: []", async () => {
    const doc = await document();
    const health = doc.paths["/health"]?.get;
    expect(health?.operationId).toBe("getHealth");
    expect(health?.security).toEqual([]);
    expect(health?.responses["200"]?.content?.["application/json"]?.schema).toMatchObject({
      properties: {
        status: { enum: ["ok"] },
        gateway: { enum: ["sandbox", "waha", "evolution", "cloud_api"] },
      },
    });
    expect(health?.responses["503"]?.content?.["application/json"]?.schema).toMatchObject({
      properties: { code: { enum: ["gateway_misconfigured", "service_misconfigured"] } },
    });
  });

  it("answers as documented", async () => {
    const res = await call("GET", "/health");
    expect(res.body).toEqual({ status: "ok", gateway: "sandbox" });
  });
});

/**
 * The statuses the error model answers an operation with, from facts of its definition: its
 * security (API key or admin token: 401; `/admin` is 404 without ADMIN_TOKEN), its method (the body
 * guard checks every body but those of GET, HEAD and OPTIONS: 400, 413, 415), its declared input
 * (422 when anything is validated) and path parameters (404), and 500 everywhere.
 */
function statusesOf(method: string, op: Operation, schemes: Doc["components"]["securitySchemes"]): string[] {
  const statuses = new Set(["500"]);
  const names = (op.security ?? []).flatMap((requirement) => Object.keys(requirement));
  if (names.some((name) => schemes[name]?.type === "http")) statuses.add("401");
  if (names.includes("AdminToken")) statuses.add("404");
  if (!["get", "head", "options"].includes(method)) for (const s of ["400", "413", "415"]) statuses.add(s);
  const params = op.parameters ?? [];
  if (op.requestBody || params.some((p) => p.in === "query" || p.in === "header")) statuses.add("422");
  if (params.some((p) => p.in === "path")) statuses.add("404");
  return [...statuses];
}

describe("documented problems", () => {
  it("lists every status the error model can produce for each operation", async () => {
    const doc = await document();
    for (const [path, method, op] of operations(doc.paths)) {
      const documented = Object.keys(op.responses);
      for (const status of statusesOf(method, op, doc.components.securitySchemes)) {
        expect(documented, `${method.toUpperCase()} ${path}`).toContain(status);
      }
    }
  });

  it("spot-checks the facts: a key route, a body route, an unauthenticated one", async () => {
    const doc = await document();
    const statuses = (path: string, method: string) =>
      Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort();
    expect(statuses("/v1/chatapp/sessions", "get")).toEqual([
      "200",
      "401",
      "403",
      "422",
      "429",
      "500",
      "503",
    ]);
    expect(statuses("/v1/chatapp/messages", "post")).toEqual(
      expect.arrayContaining(["400", "401", "402", "413", "415", "422", "500"]),
    );
    expect(statuses("/health", "get")).toEqual(["200", "500", "503"]);
  });

  it("refers to shared problem responses whose status matches their codes", async () => {
    const doc = await document();
    const shared = doc.components.responses;
    expect(Object.keys(shared).sort()).toEqual([
      "AccountMoving",
      "InsufficientScope",
      "InternalError",
      "InvalidJson",
      "NotFound",
      "PayloadTooLarge",
      "RateLimited",
      "Unauthenticated",
      "UnsupportedMediaType",
      "ValidationFailed",
    ]);
    for (const response of Object.values(shared)) {
      expect(response.content["application/problem+json"]?.schema).toEqual({
        $ref: "#/components/schemas/Problem",
      });
    }
    const seen = new Set<string>();
    for (const [path, method, op] of operations(doc.paths)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!response.$ref) continue;
        const name = response.$ref.replace("#/components/responses/", "");
        expect(shared, `${method} ${path}`).toHaveProperty(name);
        // Every code the shared response names answers with the status it is listed under.
        for (const code of shared[name]?.description.match(/`[a-z_]+`/g) ?? []) {
          expect(String(ERROR_STATUS[code.slice(1, -1) as keyof typeof ERROR_STATUS])).toBe(status);
        }
        seen.add(name);
      }
    }
    expect([...seen].sort()).toEqual(Object.keys(shared).sort());
  });

  it("keeps a route's own description of a status it documents itself", async () => {
    const doc = await document();
    const verify = doc.paths["/v1/otp/{id}/verify"]?.post?.responses["422"];
    expect(verify?.$ref).toBeUndefined();
    expect(JSON.stringify(verify)).toContain("otp_invalid");
  });

  it("says where 405 comes from", async () => {
    const doc = await document();
    expect(doc.info.description).toContain("405 `method_not_allowed`");
  });
});

describe("the link page in the document", () => {
  it("documents every answer of GET /link/{token} as HTML, a 429 with its rate-limit headers", async () => {
    const page = (await document()).paths["/link/{token}"]?.get;
    expect(Object.keys(page?.responses ?? {}).sort()).toEqual(["200", "404", "410", "429", "500"]);
    for (const [status, response] of Object.entries(page?.responses ?? {})) {
      expect(Object.keys(response.content ?? {}), status).toEqual(["text/html"]);
    }
    const limited = page?.responses["429"] as { headers?: Record<string, unknown> } | undefined;
    expect(Object.keys(limited?.headers ?? {}).sort()).toEqual([
      "RateLimit",
      "RateLimit-Policy",
      "Retry-After",
    ]);
  });
});

describe("a message's metadata in the document", () => {
  interface ObjectSchema {
    $ref?: string;
    type?: string;
    description?: string;
    properties?: Record<string, { description?: string }>;
    additionalProperties?: unknown;
  }

  it("is the MessageMetadata schema: every key the service writes, described, unknown keys allowed", async () => {
    const res = await call<{ components: { schemas: Record<string, ObjectSchema> } }>("GET", "/openapi.json");
    const schemas = res.body.components.schemas;
    expect(schemas.Message?.properties?.metadata).toEqual({ $ref: "#/components/schemas/MessageMetadata" });
    const metadata = schemas.MessageMetadata;
    expect(metadata?.type).toBe("object");
    expect(metadata?.additionalProperties).toEqual({});
    expect(Object.keys(metadata?.properties ?? {})).toEqual(Object.keys(MessageMetadataSchema.shape));
    expect(Object.keys(metadata?.properties ?? {})).toEqual(
      expect.arrayContaining(["attempts", "send_attempts", "outcome", "settled_by", "template", "typing"]),
    );
    expect(Object.keys(metadata?.properties ?? {})).toEqual(
      expect.arrayContaining([
        "pricing",
        "reactions",
        "failover",
        "media_error",
        "media_expired_at",
        "quoted",
      ]),
    );
    const undescribed = Object.entries(metadata?.properties ?? {})
      .filter(([, property]) => !property.description)
      .map(([key]) => key);
    expect(undescribed).toEqual([]);
    expect(metadata?.description).toContain("keys not listed may be added later");
  });
});
