import { createRoute } from "@hono/zod-openapi";
import { json, problems, requires } from "../openapi";
import {
  ContactEnvelopeSchema,
  ContactIdParam,
  ContactListQuery,
  ContactListSchema,
} from "./contacts.schemas";

const common = { tags: ["Contacts"] };

export const list = createRoute({
  operationId: "listContacts",
  ...requires("contacts:read"),
  ...common,
  method: "get",
  path: "/",
  summary: "List the account's contacts, newest first",
  description:
    "Everyone who wrote to one of the account's sessions, each known by a phone number, a user id (BSUID or LID) or both " +
    "(docs/contacts.md, Contacts). An identifier filter matches every identifier a contact was ever known by. Cursor-paged like the message list.",
  request: { query: ContactListQuery },
  responses: {
    200: json(ContactListSchema, "A page of contacts"),
    ...problems("unauthenticated", "validation_failed"),
  },
});

export const show = createRoute({
  operationId: "getContact",
  ...requires("contacts:read"),
  ...common,
  method: "get",
  path: "/{id}",
  summary: "Get a contact, with every identifier it was known by",
  request: { params: ContactIdParam },
  responses: {
    200: json(ContactEnvelopeSchema, "The contact"),
    ...problems("unauthenticated", "not_found"),
  },
});
