/**
 * Checks bodies against Meta's WhatsApp Cloud API OpenAPI document (github.com/facebook/openapi,
 * business-messaging-api_v23.0.yaml; the part we use is committed as meta-openapi.json, made by
 * scripts/meta-openapi-subset.mjs, with the commit in its `x-subset` field), as JSON Schema
 * 2020-12 (OpenAPI 3.1's dialect) through @cfworker/json-schema, which needs no `eval` and so runs
 * in workerd as in Node.
 *
 * The document has gaps. Read as written, it refuses every message Meta's own examples send and
 * every webhook Meta's own examples show, so the checker reads it as follows (each reading is
 * tested in test/cloud-api-fake/schema.test.ts):
 *
 * (a) The message schemas (`TextMessage`, `ImageMessage`, …) are `allOf: [BaseMessageProperties,
 *     { additionalProperties: false, … }]`: `additionalProperties` sees only its own object's
 *     `properties`, so `messaging_product` and `to` would be refused. Read as
 *     `unevaluatedProperties: false` on the whole message (the 2020-12 keyword for "no field
 *     that no part declares"). `TemplateMessage` alone lacks the `false`; it is closed the same way.
 * (b) `biz_opaque_callback_data` is declared only on `CallRequestPayload` (a string, at most 512
 *     characters) and on no message schema, while Meta's send-message reference accepts it on
 *     every message and echoes it in status webhooks: every message (`BaseMessageProperties`)
 *     and every status (`Statuses`) accepts it, with `CallRequestPayload`'s definition.
 * (c) The document requires `recipient_type` (`BaseMessageProperties`) and a template's
 *     `language.policy` (`LanguageObject`), which Meta's own examples omit. We send what the
 *     document requires, so they stay required.
 * (d) A template button's `index` has the pattern `^[2-6, 11-14]$` (a character class: one of
 *     "2"-"6", ",", " ", "1", "-", "4"), which refuses "0", the index of the first button and of
 *     every authentication template's copy-code button. Read as its description says,
 *     "Position index of the button (0-9)": `^[0-9]$`.
 * (e) `TemplateComponent`, `ParameterObject` and `ButtonParameterObject` (and an interactive
 *     reply in webhooks) name their variants only in an OpenAPI `discriminator`, which JSON
 *     Schema ignores, so a component's parameters would go unchecked. A $ref to such a schema
 *     (other than from its own variants' `allOf`) also applies the variant the discriminator
 *     picks (`if type is "body" then BodyComponent`, …). The `Message` root, which has a
 *     `oneOf` too, is checked against the variant its `type` picks, for precise errors.
 * (f) `MediaObject.link` has `format: url`, not a JSON Schema format; the validator's own "url"
 *     refuses hosts without a public name (127.0.0.1, localhost). Read as `format: uri`.
 * (g) The document joins several documents and renamed clashing schema names in the later ones
 *     (`TextMessage_2`) without renaming the $refs inside them, so `IncomingMessage` points at the
 *     outgoing `TextMessage`. In webhooks, the names in `x-subset.webhookRenames` are read as
 *     their renamed webhook schemas.
 * (i) An incoming message's `context` (`ContextObject`) requires `referred_product`, which only a
 *     message sent from a product's "Message business" button carries (the schema's own
 *     description), while a reply's context is `{ from, id }` alone (the document's own
 *     button-reply and list-reply examples; Meta's webhook reference, "messages → context").
 *     Read with `from` and `id` required.
 * (j) The document predates business-scoped user ids (BSUIDs). Its schemas get the BSUID fields
 *     of Meta's "Business-scoped user IDs" page (https://developers.facebook.com/documentation/
 *     business-messaging/whatsapp/business-scoped-user-ids/; restated field by field at
 *     https://dualhook.com/docs/contacts-bsuid-api-changes and
 *     https://dualhook.com/docs/contacts-bsuid-webhooks), as {@link BSUID_READINGS} lists them,
 *     and nothing else: a message may name its recipient by `recipient` (a BSUID) instead of `to`
 *     (one of them required; with both, `to` wins); an incoming message's `from` becomes optional
 *     beside `from_user_id` / `from_parent_user_id` (one of `from`, `from_user_id` required); a
 *     `contacts[]` entry gains `user_id`, `parent_user_id` and `profile.username`, and its
 *     `profile` and `profile.name` become optional (a status webhook's entry has no profile on
 *     `sent` and `profile.username` alone on delivered and read); a status gains
 *     `recipient_user_id` / `recipient_parent_user_id` (one of them or `recipient_id` required)
 *     and its value a `contacts[]`; and the `user_id_update` field is added as
 *     {@link USER_ID_UPDATE_VALUE}, as (h) adds its field.
 * (h) The document has no `message_template_status_update` webhook (`Change.field` lists
 *     messages and group fields only). It is added as {@link TEMPLATE_STATUS_UPDATE_VALUE}, from
 *     Meta's webhook reference page.
 * (k) `LocationMessage.location` requires nothing, while Meta's "Location messages" page
 *     (https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/location-messages/)
 *     marks `latitude` and `longitude` "Required": read with both required. Their type stays the
 *     document's, `string` (as that page has it too), so the document's own examples, which
 *     write numbers, are refused.
 * (l) A read receipt (`status: "read"` on the messages edge) is `MarkMessageRequestPayload`, which
 *     the document declares but no operation references (the subset keeps it by name,
 *     scripts/meta-openapi-subset.mjs `EXTRA_SCHEMAS`), with
 *     `typing_indicator: { type: "text" }` (the operation's example "Send typing indicator and read
 *     receipt", which the payload lacks), `messaging_product` "whatsapp" and `status` "read" (Meta's
 *     guide "Mark messages as read", https://developers.facebook.com/docs/whatsapp/cloud-api/guides/mark-message-as-read/:
 *     "messaging_product set to whatsapp, message_id set to the message ID and status to read"),
 *     and closed as (a) closes the messages, so a receipt mixed with a message's fields is refused.
 *     Its answer is `MarkMessageResponsePayload`, as the document has it.
 * (m) `ActionObject` is a `oneOf` of every interactive type's action, tied to none, so reply
 *     buttons' `type: "button"` with a list's `button` and `sections` pass, and a wrong button is
 *     reported against every variant. Its description says "Its structure varies by interactive
 *     message type", and Meta's "Interactive reply buttons messages" and "Interactive list
 *     messages" pages (https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-reply-buttons-messages,
 *     https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/interactive-list-messages)
 *     give each type's: an `InteractiveObject` of `type: "button"` takes the variant with
 *     `buttons`, of `type: "list"` the one with `button` and `sections`; other types keep the
 *     `oneOf`.
 * (n) A list reply's `list_reply` (`InteractiveListReplyContent`) requires `description`, while
 *     the row it echoes may have none (`SectionObject` rows: "Optional row description"). Read
 *     with `id` and `title` required, so the reply to a row without a description passes.
 * (o) The document has no incoming edit or revoke (`IncomingMessage` lists neither type), which
 *     Meta's "Edit messages webhook reference" and "Revoke messages webhook reference"
 *     (developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/edit
 *     and …/messages/revoke; "only available to WhatsApp Business app users (aka “Coexistence”)")
 *     describe. They are added to `IncomingMessage` as {@link EDIT_MESSAGE} and
 *     {@link REVOKE_MESSAGE}, from those pages.
 */
import { type Schema, Validator } from "@cfworker/json-schema";
import subset from "./meta-openapi.json" with { type: "json" };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/**
 * Bodies {@link checkBody} checks: the request bodies of the document's operations, and
 * `markRead`, a read receipt (reading l), which goes to the `sendMessage` operation's path.
 */
export type RequestOperation = "sendMessage" | "createTemplate" | "markRead";

/**
 * Answers {@link checkAnswer} checks: the 200 answers of the document's operations, `markRead`'s
 * (reading l), and `error`, the document's GraphAPIError.
 */
export type AnswerOperation =
  | "sendMessage"
  | "getPhoneNumber"
  | "listPhoneNumbers"
  | "listTemplates"
  | "createTemplate"
  | "markRead"
  | "error";

const document = subset as unknown as {
  "x-subset": { webhookRenames: Record<string, string> };
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject> };
};

const OPERATIONS: Record<Exclude<AnswerOperation, "error" | "markRead">, [path: string, method: string]> = {
  sendMessage: ["/{Version}/{Phone-Number-ID}/messages", "post"],
  getPhoneNumber: ["/{Version}/{Phone-Number-ID}", "get"],
  listPhoneNumbers: ["/{Version}/{WABA-ID}/phone_numbers", "get"],
  listTemplates: ["/{Version}/{WABA-ID}/message_templates", "get"],
  createTemplate: ["/{Version}/{WABA-ID}/message_templates", "post"],
};

const SCHEMAS = "#/components/schemas/";
const BIZ_OPAQUE_CALLBACK_DATA = { $ref: `${SCHEMAS}CallRequestPayload/properties/biz_opaque_callback_data` };

/**
 * The value of a `message_template_status_update` webhook change, which the document lacks
 * (reading h). Fields and types from Meta's "message_template_status_update webhook reference"
 * (developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/
 * message_template_status_update): `event` is the template's new status, `reason` a rejection
 * reason or "NONE" (null when the template is scheduled for deletion); the `*_info` objects come
 * only with some events.
 */
export const TEMPLATE_STATUS_UPDATE_VALUE = {
  type: "object",
  required: ["event", "message_template_id", "message_template_name", "message_template_language", "reason"],
  properties: {
    event: {
      type: "string",
      enum: [
        "APPROVED",
        "ARCHIVED",
        "DELETED",
        "DISABLED",
        "FLAGGED",
        "IN_APPEAL",
        "LIMIT_EXCEEDED",
        "LOCKED",
        "PAUSED",
        "PENDING",
        "PENDING_DELETION",
        "REINSTATED",
        "REJECTED",
        "UNARCHIVED",
      ],
    },
    message_template_id: { type: "integer" },
    message_template_name: { type: "string" },
    message_template_language: { type: "string" },
    reason: { type: ["string", "null"] },
    message_template_category: { type: "string", enum: ["MARKETING", "UTILITY", "AUTHENTICATION"] },
    disable_info: { type: "object", properties: { disable_date: { type: "integer" } } },
    other_info: {
      type: "object",
      properties: { title: { type: "string" }, description: { type: "string" } },
    },
    rejection_info: {
      type: "object",
      properties: { reason: { type: "string" }, recommendation: { type: "string" } },
    },
  },
} satisfies JsonObject;

/** Reading (l) applied to `schemas`: the read receipt's request payload as the reading says. */
function readReceipts(schemas: Record<string, JsonObject>): void {
  const request = schemas.MarkMessageRequestPayload;
  if (!request) throw new Error("the subset lacks MarkMessageRequestPayload");
  request.properties = {
    ...(request.properties as JsonObject),
    messaging_product: { type: "string", const: "whatsapp" },
    status: { type: "string", const: "read" },
    typing_indicator: {
      type: "object",
      required: ["type"],
      properties: { type: { type: "string", enum: ["text"] } },
      additionalProperties: false,
    },
  };
  request.additionalProperties = false;
}

/** Reading (m): the `ActionObject` variant each interactive `type` takes, by the fields it requires. */
const ACTION_OF_TYPE: Record<string, string[]> = { button: ["buttons"], list: ["button", "sections"] };

/** Reading (m) applied to `schemas`: `InteractiveObject.action` checked as the variant its `type` names. */
function readInteractiveActions(schemas: Record<string, JsonObject>): void {
  const interactive = schemas.InteractiveObject;
  const variants = schemas.ActionObject?.oneOf;
  if (!interactive || !isObject(interactive.properties) || !Array.isArray(variants))
    throw new Error("Reading (m): no InteractiveObject or ActionObject.oneOf");
  const { action, ...others } = interactive.properties;
  if (!isObject(action)) throw new Error("Reading (m): no InteractiveObject.action");
  // if type is "button" then action is the buttons variant, else if "list" …, else the oneOf.
  let checked: JsonObject = { properties: { action } };
  for (const [type, required] of Object.entries(ACTION_OF_TYPE).reverse()) {
    const variant = variants.find(
      (v) => isObject(v) && JSON.stringify(v.required) === JSON.stringify(required),
    );
    if (!isObject(variant)) throw new Error(`Reading (m): no ActionObject variant for ${type}`);
    checked = {
      if: { properties: { type: { const: type } }, required: ["type"] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's `then` keyword; the object is never awaited.
      then: { properties: { action: { type: "object", ...variant } } },
      else: checked,
    };
  }
  interactive.properties = { ...others, action: {} };
  interactive.allOf = [checked];
}

/** Reading (n) applied to `schemas`: a list reply's `description` is optional. */
function readListReplies(schemas: Record<string, JsonObject>): void {
  const content = schemas.InteractiveListReplyContent?.properties;
  const reply = isObject(content) ? content.list_reply : undefined;
  if (!isObject(reply)) throw new Error("Reading (n): no InteractiveListReplyContent.list_reply");
  reply.required = ["id", "title"];
}

/** An edited media message's object (reading o): the media's fields, with its new `caption`. */
const EDITED_MEDIA: JsonObject = {
  allOf: [
    { $ref: `${SCHEMAS}MediaMessageProperties` },
    { type: "object", properties: { caption: { type: "string" }, url: { type: "string" } } },
  ],
};

/**
 * An incoming edit (reading o), from Meta's "Edit messages webhook reference": the base message
 * fields (`from`, `id` of the edit, `timestamp`), `type: "edit"` and `edit: { original_message_id,
 * message }`, `message` the edited message as it now reads: its `type` and that type's object (a
 * `text`'s `body`; an `image`, `video` or `document` with its `caption`: "text, media with
 * caption"), and a `context: { id }`.
 */
export const EDIT_MESSAGE: JsonObject = {
  allOf: [
    { $ref: `${SCHEMAS}BaseMessageProperties_1` },
    {
      type: "object",
      required: ["type", "edit"],
      properties: {
        type: { type: "string", enum: ["edit"] },
        edit: {
          type: "object",
          required: ["original_message_id", "message"],
          properties: {
            original_message_id: { type: "string" },
            message: {
              type: "object",
              required: ["type"],
              properties: {
                context: { type: "object", required: ["id"], properties: { id: { type: "string" } } },
                type: { type: "string", enum: ["text", "image", "video", "document"] },
                text: { type: "object", required: ["body"], properties: { body: { type: "string" } } },
                image: EDITED_MEDIA,
                video: EDITED_MEDIA,
                document: EDITED_MEDIA,
              },
            },
          },
        },
      },
    },
  ],
};

/**
 * An incoming revoke (reading o), from Meta's "Revoke messages webhook reference": the base message
 * fields, `type: "revoke"` and `revoke: { original_message_id }`, the message deleted for everyone.
 */
export const REVOKE_MESSAGE: JsonObject = {
  allOf: [
    { $ref: `${SCHEMAS}BaseMessageProperties_1` },
    {
      type: "object",
      required: ["type", "revoke"],
      properties: {
        type: { type: "string", enum: ["revoke"] },
        revoke: {
          type: "object",
          required: ["original_message_id"],
          properties: { original_message_id: { type: "string" } },
        },
      },
    },
  ],
};

/** Reading (o) applied to `schemas`: `IncomingMessage` takes an edit and a revoke. */
function readEditsAndRevokes(schemas: Record<string, JsonObject>): void {
  const incoming = schemas.IncomingMessage;
  const mapping = isObject(incoming?.discriminator) ? incoming.discriminator.mapping : undefined;
  if (!incoming || !Array.isArray(incoming.oneOf) || !isObject(mapping))
    throw new Error("Reading (o): no IncomingMessage with a oneOf and a discriminator");
  schemas.EditMessage = structuredClone(EDIT_MESSAGE);
  schemas.RevokeMessage = structuredClone(REVOKE_MESSAGE);
  for (const [type, name] of [
    ["edit", "EditMessage"],
    ["revoke", "RevokeMessage"],
  ]) {
    incoming.oneOf.push({ $ref: `${SCHEMAS}${name}` });
    mapping[type as string] = `${SCHEMAS}${name}`;
  }
}

/** A BSUID or parent BSUID: an ISO 3166 alpha-2 code, a dot, up to 128 alphanumerics ("Business-scoped user IDs"). */
const BSUID = { type: "string", pattern: "^[A-Z]{2}\\.(ENT\\.)?[A-Za-z0-9]{1,128}$" } satisfies JsonObject;

/** `{ previous, current }` of an identifier a `user_id_update` entry reports as changed. */
const ID_CHANGE = {
  type: "object",
  required: ["previous", "current"],
  properties: { previous: BSUID, current: BSUID },
} satisfies JsonObject;

/**
 * The value of a `user_id_update` webhook change (reading j), read as a `messages` value is, with
 * `user_id_update[]`: `wa_id` (when Meta shares the number), `user_id` and `parent_user_id` as
 * `{ previous, current }`, `timestamp`. No page we could open quotes this value whole: it is the
 * shape src/gateways/cloud-api/events.ts `userIdUpdateEvents` reads, kept in one place.
 */
export const USER_ID_UPDATE_VALUE = {
  type: "object",
  required: ["messaging_product", "metadata", "user_id_update"],
  properties: {
    messaging_product: { type: "string" },
    metadata: { $ref: "#/components/schemas/Metadata" },
    user_id_update: {
      type: "array",
      items: {
        type: "object",
        required: ["user_id", "timestamp"],
        properties: {
          wa_id: { type: "string" },
          user_id: ID_CHANGE,
          parent_user_id: ID_CHANGE,
          timestamp: { type: "string" },
        },
      },
    },
  },
} satisfies JsonObject;

/**
 * Reading (j): the BSUID fields each schema gains, and the `required` lists they loosen into "one
 * of these" (`anyOf` of `required`), by schema name (webhook schemas by their renamed names).
 */
const BSUID_READINGS: Record<
  "request" | "webhook",
  Record<string, { properties: JsonObject; oneOf?: string[]; optional?: string[] }>
> = {
  request: { BaseMessageProperties: { properties: { recipient: BSUID }, oneOf: ["to", "recipient"] } },
  webhook: {
    BaseMessageProperties_1: {
      properties: { from_user_id: BSUID, from_parent_user_id: BSUID },
      oneOf: ["from", "from_user_id"],
    },
    ContactProfile: { properties: { user_id: BSUID, parent_user_id: BSUID }, optional: ["profile"] },
    Statuses: {
      properties: { recipient_user_id: BSUID, recipient_parent_user_id: BSUID },
      oneOf: ["recipient_id", "recipient_user_id"],
    },
    StatusMessageValue: {
      properties: { contacts: { type: "array", items: { $ref: "#/components/schemas/ContactProfile" } } },
    },
  },
};

/** Applies reading (j) to `schemas` for `part`. */
function readBsuids(schemas: Record<string, JsonObject>, part: "request" | "webhook"): void {
  for (const [name, reading] of Object.entries(BSUID_READINGS[part])) {
    const schema = schemas[name];
    if (!schema || !isObject(schema.properties)) throw new Error(`Reading (j): no schema ${name}`);
    Object.assign(schema.properties, structuredClone(reading.properties));
    const loosened = [...(reading.oneOf ?? []), ...(reading.optional ?? [])];
    if (Array.isArray(schema.required))
      schema.required = schema.required.filter((f) => !loosened.includes(String(f)));
    if (reading.oneOf) schema.anyOf = reading.oneOf.map((field) => ({ required: [field] }));
  }
  if (part === "webhook") {
    const profile = schemas.ContactProfile?.properties;
    const inner = isObject(profile) && isObject(profile.profile) ? profile.profile.properties : undefined;
    if (isObject(inner)) inner.username = { type: "string" };
    // A status's entry has `profile.username` alone (delivered and read): `name` is not required.
    if (isObject(profile) && isObject(profile.profile)) delete profile.profile.required;
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Calls `visit` on every object inside `value`, parents before children. */
function eachObject(value: Json, visit: (node: JsonObject) => void): void {
  if (Array.isArray(value)) for (const item of value) eachObject(item, visit);
  else if (isObject(value)) {
    visit(value);
    for (const child of Object.values(value)) eachObject(child, visit);
  }
}

/**
 * A copy of schemas without `example` and `examples`: annotations only, and the validator would
 * read an example's `id` as a schema id. A `properties` map keeps a field named "example".
 */
function withoutExamples<T extends Json>(value: T, parentKey = ""): T {
  if (Array.isArray(value)) return value.map((item) => withoutExamples(item)) as T;
  if (!isObject(value)) return value;
  const copy: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    if (parentKey !== "properties" && (key === "example" || key === "examples")) continue;
    copy[key] = withoutExamples(child, key);
  }
  return copy as T;
}

/** The schema a `#/components/schemas/Name` pointer names, if it is one. */
function target(schemas: Record<string, JsonObject>, ref: Json | undefined): JsonObject | undefined {
  return typeof ref === "string" && ref.startsWith(SCHEMAS) ? schemas[ref.slice(SCHEMAS.length)] : undefined;
}

/**
 * Reading (e): a discriminator as OpenAPI means it, "the value of `propertyName` picks the
 * schema", written as JSON Schema: `allOf` of one `if: { propertyName: value } then: target` per
 * entry of the mapping, so only the picked variant's errors are reported.
 */
function discriminated(discriminator: Json | undefined): Json[] | undefined {
  if (!isObject(discriminator) || !isObject(discriminator.mapping)) return undefined;
  const property = discriminator.propertyName;
  if (typeof property !== "string") return undefined;
  return Object.entries(discriminator.mapping).map(([value, ref]) => ({
    if: { properties: { [property]: { const: value } }, required: [property] },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's `then` keyword; the object is never awaited.
    then: { $ref: ref },
  }));
}

/**
 * Reading (e) applied: a $ref to a schema that names its variants only in a discriminator (no
 * `oneOf`) also applies the variant, except from the variants' own `allOf` (which would loop); an
 * inline discriminator (the webhooks' interactive reply) applies it in place.
 */
function expandDiscriminators(schemas: Record<string, JsonObject>): void {
  const named = new Set<Json>(Object.values(schemas));
  const conditions = (schema: JsonObject | undefined) =>
    schema && !schema.oneOf && !schema.anyOf ? discriminated(schema.discriminator) : undefined;
  eachObject(schemas, (node) => {
    const inline = named.has(node) ? undefined : conditions(node);
    if (inline) node.allOf = [...(Array.isArray(node.allOf) ? node.allOf : []), ...inline];
    for (const [key, child] of Object.entries(node)) {
      if (key === "allOf") continue;
      for (const member of Array.isArray(child) ? child : [child]) {
        const variants = isObject(member) ? conditions(target(schemas, member.$ref)) : undefined;
        if (isObject(member) && variants) member.allOf = [{ $ref: member.$ref ?? null }, ...variants];
        if (isObject(member) && variants) delete member.$ref;
      }
    }
  });
}

/** The document's schemas with the readings of outgoing requests: (a) to (f), (j), (k), (l) and (m). */
function requestSchemas(): Record<string, JsonObject> {
  const schemas = withoutExamples(document.components.schemas);
  eachObject(schemas, (node) => {
    const closes =
      Array.isArray(node.allOf) && node.allOf.some((m) => isObject(m) && m.additionalProperties === false);
    if (closes && Array.isArray(node.allOf)) {
      for (const member of node.allOf) if (isObject(member)) delete member.additionalProperties;
      node.unevaluatedProperties = false; // (a)
    }
    if (node.pattern === "^[2-6, 11-14]$") node.pattern = "^[0-9]$"; // (d)
    if (node.format === "url") node.format = "uri"; // (f)
  });
  const template = schemas.TemplateMessage;
  if (template) template.unevaluatedProperties = false; // (a), TemplateMessage
  const base = schemas.BaseMessageProperties?.properties;
  if (isObject(base)) base.biz_opaque_callback_data = BIZ_OPAQUE_CALLBACK_DATA; // (b)
  readBsuids(schemas, "request"); // (j)
  // (k): LocationMessage is allOf [BaseMessageProperties, { properties: { type, location } }].
  const location = schemas.LocationMessage?.allOf;
  const point = Array.isArray(location)
    ? location.find((m) => isObject(m) && isObject(m.properties))
    : undefined;
  const locationObject =
    isObject(point) && isObject(point.properties) ? point.properties.location : undefined;
  if (!isObject(locationObject)) throw new Error("Reading (k): no LocationMessage.location");
  locationObject.required = ["latitude", "longitude"]; // (k)
  readReceipts(schemas); // (l)
  readInteractiveActions(schemas); // (m)
  expandDiscriminators(schemas); // (e)
  return schemas;
}

/** The document's schemas with the readings of webhooks: (b), (e), (g), (h), (i), (j), (n) and (o). */
function webhookSchemas(): Record<string, JsonObject> {
  const schemas = withoutExamples(document.components.schemas);
  const renames = document["x-subset"].webhookRenames;
  eachObject(schemas, (node) => {
    const name = typeof node.$ref === "string" ? node.$ref.slice(SCHEMAS.length) : undefined;
    const renamed = name === undefined ? undefined : renames[name];
    if (renamed) node.$ref = `${SCHEMAS}${renamed}`; // (g)
  });
  const statuses = schemas.Statuses?.properties;
  if (isObject(statuses)) statuses.biz_opaque_callback_data = BIZ_OPAQUE_CALLBACK_DATA; // (b)
  const context = schemas.ContextObject;
  if (context) context.required = ["from", "id"]; // (i)
  schemas.TemplateStatusUpdateValue = structuredClone(TEMPLATE_STATUS_UPDATE_VALUE); // (h)
  schemas.UserIdUpdateValue = structuredClone(USER_ID_UPDATE_VALUE); // (j)
  readBsuids(schemas, "webhook"); // (j)
  readListReplies(schemas); // (n)
  readEditsAndRevokes(schemas); // (o)
  const change = schemas.Change?.properties;
  if (isObject(change) && isObject(change.field) && Array.isArray(change.field.enum)) {
    change.field.enum.push("message_template_status_update", "user_id_update");
  }
  if (isObject(change) && isObject(change.value) && Array.isArray(change.value.oneOf)) {
    change.value.oneOf.push({ $ref: `${SCHEMAS}TemplateStatusUpdateValue` });
    change.value.oneOf.push({ $ref: `${SCHEMAS}UserIdUpdateValue` });
  }
  expandDiscriminators(schemas); // (e)
  return schemas;
}

let requests: Record<string, JsonObject> | undefined;
let webhooks: Record<string, JsonObject> | undefined;
let asWritten: Record<string, JsonObject> | undefined;
const validators = new Map<string, Validator>();

/** A validator of `schema` (a schema object or a $ref) that resolves $refs into `schemas`. */
function validator(key: string, schema: JsonObject, schemas: Record<string, JsonObject>): Validator {
  let found = validators.get(key);
  if (!found) {
    found = new Validator({ ...schema, components: { schemas } } as Schema, "2020-12", false);
    validators.set(key, found);
  }
  return found;
}

/** The JSON body schema of an operation's request, or of its 200 answer. */
function operationSchema(operation: keyof typeof OPERATIONS, part: "request" | "answer"): JsonObject {
  const [path, method] = OPERATIONS[operation];
  const op = document.paths[path]?.[method];
  const holder =
    part === "request" ? op?.requestBody : isObject(op?.responses) ? op.responses["200"] : undefined;
  const content =
    isObject(holder) && isObject(holder.content) ? holder.content["application/json"] : undefined;
  if (!isObject(content) || !isObject(content.schema)) throw new Error(`No ${part} schema for ${operation}`);
  return withoutExamples(content.schema);
}

/**
 * Picks the variant an OpenAPI discriminator names for `body` (`type: "text"` → TextMessage), so
 * the errors are those of that variant, not of every member of the `oneOf`.
 */
function variantFor(schema: JsonObject, schemas: Record<string, JsonObject>, body: unknown): JsonObject {
  const { mapping, value } = discriminatorOf(schema, schemas, body);
  const ref = mapping && typeof value === "string" ? mapping[value] : undefined;
  return typeof ref === "string" ? { $ref: ref } : schema;
}

/** The root's discriminator mapping and the body's value of its property. */
function discriminatorOf(schema: JsonObject, schemas: Record<string, JsonObject>, body: unknown) {
  const resolved = target(schemas, schema.$ref) ?? schema;
  const discriminator = isObject(resolved.discriminator) ? resolved.discriminator : undefined;
  const mapping = discriminator && isObject(discriminator.mapping) ? discriminator.mapping : undefined;
  const property = typeof discriminator?.propertyName === "string" ? discriminator.propertyName : undefined;
  const value = isObject(body) && property ? body[property] : undefined;
  return { mapping, property, value };
}

/** One problem line when the body's discriminator value (a message's `type`) names no variant. */
function unknownVariantOf(schema: JsonObject, schemas: Record<string, JsonObject>, body: unknown) {
  const { mapping, property, value } = discriminatorOf(schema, schemas, body);
  if (!mapping || !property || !isObject(body) || (typeof value === "string" && value in mapping)) return;
  return `#/${property} Instance does not match any of ${JSON.stringify(Object.keys(mapping))}.`;
}

/** Keywords whose error only says that a subschema failed; the subschema's own errors say why. */
const SUMMARIES = new Set([
  "$ref",
  "$recursiveRef",
  "allOf",
  "properties",
  "patternProperties",
  "items",
  "prefixItems",
]);
const SUMMARIES_UNLESS_ALONE = new Set(["anyOf", "oneOf", "not", "contains", "if", "false"]);

/**
 * The validator's errors as lines "<instance pointer> <error>", the causes only: summaries go,
 * and so do "unevaluated property" errors when another error exists (a failing subschema
 * evaluates nothing, so its valid fields would be reported as unknown too).
 */
function problems(check: Validator, body: unknown): string[] {
  const { valid, errors } = check.validate(body);
  if (valid) return [];
  let causes = errors.filter((e) => !SUMMARIES.has(e.keyword) && !SUMMARIES_UNLESS_ALONE.has(e.keyword));
  if (causes.some((e) => e.keyword !== "unevaluatedProperties")) {
    causes = causes.filter((e) => e.keyword !== "unevaluatedProperties");
  }
  const alone = errors.filter(
    (e) =>
      SUMMARIES_UNLESS_ALONE.has(e.keyword) &&
      e.keyword !== "false" &&
      !causes.some((c) => c.instanceLocation.startsWith(e.instanceLocation)),
  );
  return [...new Set([...causes, ...alone].map((e) => `${e.instanceLocation} ${e.error}`))];
}

/**
 * Checks a request body against the document's schema for `operation` (sendMessage: `Message`;
 * createTemplate: the inline schema of POST /{Version}/{WABA-ID}/message_templates; markRead:
 * `MarkMessageRequestPayload`, reading l), with the readings above. Returns the problems, one
 * line each ("<instance pointer> <error> (<schema pointer>)"); empty when the body is valid.
 */
export function checkBody(operation: RequestOperation, body: unknown): string[] {
  requests ??= requestSchemas();
  if (operation === "markRead") {
    const schema = { $ref: `${SCHEMAS}MarkMessageRequestPayload` };
    return problems(validator("request markRead", schema, requests), body);
  }
  const root = operationSchema(operation, "request");
  const unknownVariant = unknownVariantOf(root, requests, body);
  if (unknownVariant) return [unknownVariant];
  const schema = variantFor(root, requests, body);
  return problems(validator(`request ${operation} ${schema.$ref ?? ""}`, schema, requests), body);
}

/**
 * Checks an answer body against the document: the 200 answer's schema of `operation`
 * (sendMessage: `MessageResponsePayload`; getPhoneNumber: `PhoneNumberInfo`; listPhoneNumbers:
 * `WhatsAppBusinessAccountPhoneNumbersConnection`; listTemplates and
 * createTemplate: their inline schemas; markRead: `MarkMessageResponsePayload`, reading l), or
 * `GraphAPIError` for `error`. Returns the problems as {@link checkBody} does.
 */
export function checkAnswer(operation: AnswerOperation, body: unknown): string[] {
  requests ??= requestSchemas();
  const schema =
    operation === "error"
      ? { $ref: `${SCHEMAS}GraphAPIError` }
      : operation === "markRead"
        ? { $ref: `${SCHEMAS}MarkMessageResponsePayload` }
        : operationSchema(operation, "answer");
  return problems(validator(`answer ${operation}`, schema, requests), body);
}

/**
 * Checks a webhook body (parsed JSON) against the document's `WebhookPayload`, with the readings
 * (b), (e), (g), (h), (i), (j), (n) and (o) above. Returns the problems as {@link checkBody} does.
 */
export function checkWebhook(body: unknown): string[] {
  webhooks ??= webhookSchemas();
  return problems(validator("webhook", { $ref: `${SCHEMAS}WebhookPayload` }, webhooks), body);
}

/**
 * Checks a body against a component schema of the document as written, without the readings
 * (examples aside): for tests that show why a reading is needed. Returns problems as
 * {@link checkBody} does.
 */
export function checkAsWritten(schemaName: string, body: unknown): string[] {
  asWritten ??= withoutExamples(document.components.schemas);
  return problems(
    validator(`as written ${schemaName}`, { $ref: `${SCHEMAS}${schemaName}` }, asWritten),
    body,
  );
}

/**
 * The property names the document (with reading b) declares on a webhook schema, e.g.
 * `Statuses`, so tests can assert the fake invents no field. Empty for an unknown name.
 */
export function webhookFields(schemaName: string): string[] {
  webhooks ??= webhookSchemas();
  const properties = webhooks[schemaName]?.properties;
  return isObject(properties) ? Object.keys(properties) : [];
}
