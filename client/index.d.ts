import type { Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/**
 * An error answer: RFC 9457 problem details, as every error of the API is sent
 * (`application/problem+json`). Branch on `code` (a stable enum), show `detail`, quote
 * `request_id` to support.
 */
export type Problem = components["schemas"]["Problem"];

export interface ChatappClientOptions {
  /** The API's origin, e.g. `https://api.example.com` or `http://localhost:8787`. */
  baseUrl: string;
  /** An API key (`sk_…`), sent as `Authorization: Bearer <key>` on every call. */
  apiKey: string;
  /** The fetch to call with (default: the global one), e.g. a service binding's. */
  fetch?: (input: Request) => Promise<Response>;
}

/**
 * The API's calls, typed from its document: `client.POST("/v1/chatapp/messages", { body })`
 * resolves to `{ data, error, response }`, `data` the success body and `error` a {@link Problem}
 * with its `status`, `code` and `request_id`.
 */
export type ChatappClient = Client<paths>;

/** A client that sends `apiKey` as the bearer key on every call to `baseUrl`. */
export function createChatappClient(options: ChatappClientOptions): ChatappClient;
