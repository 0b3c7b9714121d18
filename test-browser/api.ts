import { inject } from "vitest";
import { ADMIN_TOKEN } from "./global-setup";

/** The server under test. */
export const baseUrl = (): string => inject("baseUrl");

/**
 * One JSON request to the server under test with an optional bearer `token`.
 * @returns the status and the parsed body (null when empty).
 */
export async function api<T = Record<string, unknown>>(
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${baseUrl()}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

/** A new account with `balance` through the admin API; returns its id and API key. */
export async function createAccount(balance = 10): Promise<{ accountId: string; apiKey: string }> {
  const res = await api<{ data: { account: { id: string }; api_key: string } }>("POST", "/admin/accounts", {
    token: ADMIN_TOKEN,
    body: { name: `browser ${new Date().toISOString()}`, balance },
  });
  if (res.status !== 201) throw new Error(`create account: ${res.status} ${JSON.stringify(res.body)}`);
  return { accountId: res.body.data.account.id, apiKey: res.body.data.api_key };
}
