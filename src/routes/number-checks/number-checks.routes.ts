import { createRoute } from "@hono/zod-openapi";
import { IdParam, json, jsonBody, problems, requires } from "../openapi";
import { CheckNumbersBody, NumberCheckListSchema } from "./number-checks.schemas";

export const check = createRoute({
  operationId: "checkSessionContacts",
  // A check makes the linked phone ask the network about each number, as part of sending: it
  // needs the key that sends, and a read-only key cannot make the phone ask.
  ...requires("messages:send"),
  tags: ["Sessions"],
  method: "post",
  path: "/{id}/contacts/check",
  summary: "Check whether numbers are on the chat network",
  description:
    "Asks the session's gateway, as its linked account, whether each number is on the network. An answer is " +
    "cached per account for 7 days and served from there without asking again; only the numbers without one " +
    "are asked. `on_chatapp` is null when the gateway could not tell (an unknown answer is not cached); the " +
    "WhatsApp Cloud API cannot ask, so its sessions answer null for every number. The session must be the " +
    "account's and `connected` (409 `session_not_connected`). Check numbers you mean to message: the network " +
    "may restrict an account that checks far more numbers than it writes to.",
  request: { params: IdParam, body: jsonBody(CheckNumbersBody) },
  responses: {
    200: json(NumberCheckListSchema, "An answer per distinct number, in request order"),
    ...problems("unauthenticated", "not_found", "session_not_connected", "validation_failed"),
  },
});
