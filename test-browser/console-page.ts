import type { Page } from "playwright-core";
import { expect } from "vitest";
import { api, baseUrl } from "./api";

// What the console's browser tests share: opening and signing in to the console, collecting the
// page's errors, polling, and a session linked through the sandbox.

/** Collects every page error and console error (a CSP refusal is one) for a test to assert on. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  return errors;
}

/** Opens the console's sign-in form. */
export async function openConsole(page: Page): Promise<void> {
  await page.goto(`${baseUrl()}/console`);
  await page.locator("#api-key").waitFor();
}

/** Signs in to the console with `key` and waits for its navigation. */
export async function signIn(page: Page, key: string): Promise<void> {
  await openConsole(page);
  await page.fill("#api-key", key);
  await page.click("#sign-in-form button[type=submit]");
  await page.locator("#nav").waitFor();
}

/** Polls `check` until it returns a value (not undefined), for up to `ms`. */
export async function until<T>(check: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A session of `key` linked through the sandbox; returns its id. */
export async function connectedSession(key: string): Promise<string> {
  const created = await api<{ session: { id: string } }>("POST", "/v1/chatapp/sessions", { token: key });
  const id = created.body.session.id;
  const scan = await api("POST", `/sandbox/sessions/${id}/scan`, { token: key, body: {} });
  expect(scan.status).toBe(200);
  return id;
}
