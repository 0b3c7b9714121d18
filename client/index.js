// The typed client of the chat messaging and one-time-code API: openapi-fetch over the types that
// openapi-typescript generates from the committed openapi.json (client/schema.d.ts). No request
// code of its own: every call is `client.GET/POST/PATCH/PUT/DELETE(path, { params, body })`.
import createClient from "openapi-fetch";

/** See index.d.ts. */
export function createChatappClient({ baseUrl, apiKey, fetch }) {
  const client = createClient({ baseUrl, ...(fetch ? { fetch } : {}) });
  client.use({
    onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${apiKey}`);
      return request;
    },
  });
  return client;
}
