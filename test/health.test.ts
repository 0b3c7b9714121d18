import { describe, expect, it } from "vitest";
import { call } from "./helpers";

describe("GET /health", () => {
  it("answers ok without auth", async () => {
    const res = await call("GET", "/health");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok", gateway: "sandbox" });
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
