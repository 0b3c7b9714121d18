// The console's one way to call the API: `/v1` with the pasted key as a bearer token, JSON in and
// out, and every failure as an ApiError holding the RFC 9457 problem the API answered.

const KEY_NAME = "console.api_key";

/** The API key of this tab (sessionStorage: gone when the tab closes), or null. */
export function storedKey() {
  return sessionStorage.getItem(KEY_NAME);
}

/** Keeps `key` for this tab. */
export function storeKey(key) {
  sessionStorage.setItem(KEY_NAME, key);
}

/** Forgets the key (sign out). */
export function forgetKey() {
  sessionStorage.removeItem(KEY_NAME);
}

/** An API failure: `status` (0 when the service was unreachable) and the problem+json body. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {{title?: string, detail?: string, code?: string, errors?: Record<string, string[]>}} problem
   */
  constructor(status, problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

let onUnauthenticated = () => {};

/** Sets what happens when the stored key is refused (401) mid-session: the console signs out. */
export function whenUnauthenticated(handler) {
  onUnauthenticated = handler;
}

/**
 * Calls the API. `query` values that are empty are left out; arrays repeat the parameter.
 * @param {string} method
 * @param {string} path e.g. `/v1/chatapp/sessions`
 * @param {{body?: unknown, query?: Record<string, unknown>, key?: string}} [options] `key` overrides
 *   the stored key (sign-in tries a key before keeping it)
 * @returns {Promise<any>} the parsed JSON body, or null for an empty one
 * @throws {ApiError} on any non-2xx answer or a network failure
 */
export async function api(method, path, options = {}) {
  const key = options.key ?? storedKey();
  const headers = { Accept: "application/json" };
  if (key) headers.Authorization = `Bearer ${key}`;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined && one !== null && one !== "") url.searchParams.append(name, String(one));
    }
  }
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new ApiError(0, { title: "Network error", detail: "The service could not be reached. Try again." });
  }
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) {
    const problem =
      body && typeof body === "object" ? body : { title: response.statusText, detail: text.slice(0, 300) };
    if (response.status === 401 && options.key === undefined) onUnauthenticated(problem);
    throw new ApiError(response.status, problem);
  }
  return body;
}

/**
 * Reads a file of the API (e.g. `/v1/chatapp/messages/{id}/media`) with the stored key as bearer
 * token: an `<img>` or `<video>` cannot send that header, so the page fetches the bytes itself and
 * shows them through an object URL. An object URL belongs to this page's origin and ignores the
 * answer's headers, so the answer's `Content-Disposition` is followed here: unless it is `inline`
 * (an image, audio or video type, docs/security.md, Hardening), the blob is typed
 * `application/octet-stream`, which a browser saves and never renders, whatever type the sender
 * chose (`text/html`, `image/svg+xml`).
 * @param {string} path
 * @returns {Promise<{blob: Blob, type: string, inline: boolean}>} the body; `type`, the answer's
 *   `Content-Type`; `inline`, whether the blob keeps that type
 * @throws {ApiError} on any non-2xx answer (with its problem+json) or a network failure
 */
export async function apiBlob(path) {
  const key = storedKey();
  const headers = {};
  if (key) headers.Authorization = `Bearer ${key}`;
  let response;
  try {
    response = await fetch(new URL(path, location.origin), { headers });
  } catch {
    throw new ApiError(0, { title: "Network error", detail: "The service could not be reached. Try again." });
  }
  if (response.ok) {
    const type = response.headers.get("Content-Type") ?? "";
    const inline = /^inline\s*(;|$)/i.test(response.headers.get("Content-Disposition") ?? "");
    const bytes = await response.arrayBuffer();
    return { blob: new Blob([bytes], { type: inline ? type : "application/octet-stream" }), type, inline };
  }
  const text = await response.text();
  let problem;
  try {
    problem = JSON.parse(text);
  } catch {
    problem = null;
  }
  if (!problem || typeof problem !== "object")
    problem = { title: response.statusText, detail: text.slice(0, 300) };
  if (response.status === 401) onUnauthenticated(problem);
  throw new ApiError(response.status, problem);
}

/**
 * An error as an alert box: the problem's title, its detail and any field errors, each as text.
 * Other errors (bugs) show their message.
 */
export function problemBox(error) {
  const box = document.createElement("div");
  box.className = "problem";
  box.setAttribute("role", "alert");
  const problem =
    error instanceof ApiError ? error.problem : { title: "Error", detail: String(error?.message) };
  const title = document.createElement("strong");
  title.textContent = problem.title ?? "Error";
  box.append(title);
  if (problem.detail) {
    const detail = document.createElement("p");
    detail.textContent = problem.detail;
    box.append(detail);
  }
  const extras = [];
  if (typeof problem.attempts_remaining === "number")
    extras.push(`Attempts remaining: ${problem.attempts_remaining}`);
  for (const [name, messages] of Object.entries(problem.errors ?? {})) {
    extras.push(`${name}: ${[].concat(messages).join("; ")}`);
  }
  if (extras.length > 0) {
    const list = document.createElement("ul");
    for (const line of extras) {
      const item = document.createElement("li");
      item.textContent = line;
      list.append(item);
    }
    box.append(list);
  }
  if (problem.request_id) {
    const id = document.createElement("p");
    id.className = "muted";
    id.textContent = `Request id: ${problem.request_id}`;
    box.append(id);
  }
  return box;
}

/**
 * Runs `action` for a button: disables it meanwhile and shows any error in `out` (replacing what
 * was there). Returns the action's result, or undefined when it failed.
 */
export async function withButton(button, out, action) {
  if (button) button.disabled = true;
  try {
    if (out) out.replaceChildren();
    return await action();
  } catch (error) {
    if (out) out.replaceChildren(problemBox(error));
    else console.error(error);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}
