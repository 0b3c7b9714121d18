import { afterEach, describe, expect, it, vi } from "vitest";
import { log, logLine } from "../src/lib/log";

// The shape of every structured log line (src/lib/log.ts): level, event, then the fields in the
// order given, on the console method of the line's level.

afterEach(() => {
  vi.restoreAllMocks();
});

/** Spies on the three console methods the logger writes to; @returns the spies. */
function spyConsole() {
  return {
    log: vi.spyOn(console, "log").mockImplementation(() => {}),
    warn: vi.spyOn(console, "warn").mockImplementation(() => {}),
    error: vi.spyOn(console, "error").mockImplementation(() => {}),
  };
}

describe("log", () => {
  it("writes level, event, then the fields in order, on the console method of the level", () => {
    const spies = spyConsole();
    log.info("job_done", { job: "sweep", rows: 3 });
    log.warn("template_status_ignored", { waba_id: "123" });
    log.error("alarm_failed", { session: "ses_1", kind: "deadline" });

    expect(spies.log.mock.calls).toEqual([['{"level":"info","event":"job_done","job":"sweep","rows":3}']]);
    expect(spies.warn.mock.calls).toEqual([
      ['{"level":"warn","event":"template_status_ignored","waba_id":"123"}'],
    ]);
    expect(spies.error.mock.calls).toEqual([
      ['{"level":"error","event":"alarm_failed","session":"ses_1","kind":"deadline"}'],
    ]);
  });

  it("writes the error field as String(error), wherever it stands among the fields", () => {
    expect(
      logLine("error", "cron_job_failed", { job: "j", error: new Error("D1 is down"), cause: "x" }),
    ).toBe('{"level":"error","event":"cron_job_failed","job":"j","error":"Error: D1 is down","cause":"x"}');
    expect(logLine("error", "e", { error: new TypeError("bad") })).toBe(
      '{"level":"error","event":"e","error":"TypeError: bad"}',
    );
    // A thrown non-Error, and a message or code a site passes itself, are written as they are.
    expect(logLine("warn", "e", { error: "plain" })).toBe('{"level":"warn","event":"e","error":"plain"}');
    expect(logLine("warn", "e", { error: { code: 1 } })).toBe(
      '{"level":"warn","event":"e","error":"[object Object]"}',
    );
    // Only the field named error: other fields keep their JSON values.
    expect(logLine("error", "e", { retry_error: null, count: 0, ok: false, list: ["a"] })).toBe(
      '{"level":"error","event":"e","retry_error":null,"count":0,"ok":false,"list":["a"]}',
    );
  });

  it("leaves out undefined fields but error, and the event when it is null", () => {
    expect(logLine("error", "cron_job_failed", { job: "j", error: "E", cause: undefined })).toBe(
      '{"level":"error","event":"cron_job_failed","job":"j","error":"E"}',
    );
    // But for the error field, given: a thrown undefined is written, as String(error) wrote it.
    expect(logLine("error", "e", { error: undefined })).toBe(
      '{"level":"error","event":"e","error":"undefined"}',
    );
    expect(logLine("error", null, { config: "ADMIN_TOKEN is missing" })).toBe(
      '{"level":"error","config":"ADMIN_TOKEN is missing"}',
    );
    expect(logLine("info", "bare")).toBe('{"level":"info","event":"bare"}');
  });

  it("write puts a line of one level on another level's console method", () => {
    const spies = spyConsole();
    log.write("warn", "media_discard_failed", { key: "k", error: new Error("gone") }, "error");

    expect(spies.warn).not.toHaveBeenCalled();
    expect(spies.error.mock.calls).toEqual([
      ['{"level":"warn","event":"media_discard_failed","key":"k","error":"Error: gone"}'],
    ]);
  });
});
