import { describe, expect, it } from "vitest";
import { call } from "./helpers";

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string }[];
  requestBody?: unknown;
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }>;
}

interface Doc {
  info: { description: string };
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
  it("documents both answers, without security", async () => {
    const doc = await document();
    const health = doc.paths["/health"]?.get;
    expect(health?.operationId).toBe("getHealth");
    expect(health?.security).toBeUndefined();
    expect(health?.responses["200"]?.content?.["application/json"]?.schema).toMatchObject({
      properties: { status: { enum: ["ok"] }, gateway: { enum: ["sandbox", "waha", "evolution"] } },
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
