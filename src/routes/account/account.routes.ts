import { createRoute } from "@hono/zod-openapi";
import { json, problems, requires } from "../openapi";
import { AccountEnvelopeSchema } from "./account.schemas";

export const show = createRoute({
  operationId: "getOwnAccount",
  ...requires("account:read"),
  tags: ["Account"],
  method: "get",
  path: "/",
  summary: "Show the caller's account: its balance and what it buys",
  description:
    "The account the API key belongs to, with its balance, the text messages that balance covers and the price of each message type.",
  responses: { 200: json(AccountEnvelopeSchema, "The account"), ...problems("unauthenticated") },
});
