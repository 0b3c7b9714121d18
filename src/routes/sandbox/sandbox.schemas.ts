import { z } from "@hono/zod-openapi";
import { ContactCardSchema, ContactCardsSendSchema } from "../../lib/contact-cards";
import { InteractiveSchema } from "../../lib/interactive";
import { LocationSchema } from "../../lib/location";
import { MAX_POLL_OPTION, MAX_POLL_OPTIONS, PollSchema } from "../../lib/poll";
import { CONTENT_TYPES, STORED_TYPES } from "../../messages/types";
import { LocationSendSchema, ReactionSchema } from "../messages/messages.schemas";
import { PhoneNumber, UserId } from "../openapi";
import { SessionHealthSchema } from "../sessions/sessions.schemas";

export const ScanBody = z.strictObject({
  phone_number: PhoneNumber.optional().openapi({
    description:
      "The linking phone's number. Default: a stable fictional number derived from the session id.",
  }),
  display_name: z.string().trim().min(1).max(100).optional(),
  pairing_code: z.string().trim().max(20).optional().openapi({
    description:
      "The code from `POST /v1/chatapp/sessions/{id}/pairing-code`, as the phone would enter it; links the phone it was issued for.",
    example: "K7QW-3MZP",
  }),
});

export const DropBody = z.strictObject({
  reason: z.string().trim().min(1).max(200).default("connection_lost"),
  logged_out: z.boolean().default(false).openapi({
    description: "The phone removed the linked device: reconnecting then needs a new QR scan.",
  }),
});

/** The sandbox phone's state: `POST /sandbox/sessions/{id}/phone` sets it, `GET` reads it. */
export const PhoneBody = z.strictObject({
  online: z.boolean().openapi({
    description:
      "`false` takes the phone offline: messages sent stay `sent`, with no `delivered` or `read` ack. `true` brings it back: the messages whose acks were held get them, as if the phone received them now.",
    example: false,
  }),
});

export const PhoneEnvelope = z.object({
  success: z.literal(true),
  data: z.object({ online: z.boolean() }).openapi("SandboxPhone"),
});

export const BanBody = z.strictObject({ reason: z.string().trim().min(1).max(200).default("banned") });

export const PairParam = z.object({
  token: z
    .string()
    .max(200)
    .openapi({ param: { name: "token", in: "path" } }),
});

/** A message from a contact to the session's phone (docs/messages.md, Sandbox behaviours: `/inbound`). */
export const InboundBody = z
  .strictObject({
    from_number: PhoneNumber.optional().openapi({
      description: "The contact's number. Leave it out for a user known only by `from_user_id`.",
    }),
    from_user_id: UserId.optional().openapi({
      description:
        "The network's id of the user (a BSUID or `<digits>@lid`): a user who hides their number gives only this; given with `from_number`, it reveals the number (docs/contacts.md, Contacts).",
    }),
    username: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: "The user's username.", example: "@jane" }),
    name: z.string().min(1).max(128).optional().openapi({ description: "The user's profile name." }),
    type: z.enum([...CONTENT_TYPES, "sticker", "location", "contacts", "interactive_reply", "poll_vote"]),
    content: z.string().min(1).max(4096).nullish(),
    location: LocationSendSchema.optional().openapi({
      description: "For `location`: the point and place shared.",
    }),
    contacts: ContactCardsSendSchema.optional().openapi({
      description: "For `contacts`: the contact cards shared, in a send's `contacts` shape.",
    }),
    interactive_reply: z
      .strictObject({
        id: z
          .string()
          .min(1)
          .max(256)
          .openapi({ description: "The id of the button tapped or the row chosen." }),
      })
      .optional()
      .openapi({
        description:
          "For `interactive_reply`: the contact's tap on a button or row of the interactive message `reply_to` names (required), which the session sent them. An id that message does not have: 422 naming `interactive_reply.id`.",
      }),
    poll_vote: z
      .strictObject({
        options: z
          .array(z.string().min(1).max(MAX_POLL_OPTION))
          .max(MAX_POLL_OPTIONS)
          .openapi({
            description:
              "Every option the contact now picks, by its text ([] takes their vote back); each one of the poll's, one alone on a single-choice poll.",
            example: ["Tuesday"],
          }),
      })
      .optional()
      .openapi({
        description:
          "For `poll_vote`: the contact's vote on the poll `reply_to` names (required), which the session sent them. Kept on the poll as a gateway's vote is (docs/messages.md, Sending messages → Polls): the answer is the poll message with its votes (200), and nothing is stored as an incoming message.",
      }),
    media_url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .nullish()
      .openapi({
        description:
          "For media types (required): where the contact's media is, downloaded once by the session (docs/messages.md, Incoming media) from a public https URL on port 443 without redirects; a URL outside that rule keeps the message with `metadata.media_error` of reason `refused`. When the deployment sets `MEDIA_ALLOW_HTTP_LOCALHOST=true` (local development), `http://` or `https://` URLs of `localhost` or `127.0.0.1` on any port are downloaded too.",
      }),
    reply_to: z.uuid().max(36).nullish().openapi({
      description:
        "Quote a message of this chat (its id): one the session sent to the contact or received from them. Errors as a send's `reply_to`.",
    }),
  })
  .superRefine((body, ctx) => {
    if (body.from_number === undefined && body.from_user_id === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["from_number"],
        message: "from_number or from_user_id is required",
      });
    if (body.type === "text" && body.content == null)
      ctx.addIssue({ code: "custom", path: ["content"], message: "required for text" });
    if (body.type === "interactive_reply") {
      if (!body.interactive_reply)
        ctx.addIssue({
          code: "custom",
          path: ["interactive_reply"],
          message: "required for interactive_reply",
        });
      if (body.reply_to == null)
        ctx.addIssue({
          code: "custom",
          path: ["reply_to"],
          message: "required for interactive_reply: the message tapped",
        });
      if (body.content != null || body.media_url != null)
        ctx.addIssue({ code: "custom", path: ["content"], message: "a tap carries no content or media" });
    } else if (body.interactive_reply) {
      ctx.addIssue({ code: "custom", path: ["interactive_reply"], message: "only for interactive_reply" });
    }
    if (body.type === "poll_vote") {
      if (!body.poll_vote)
        ctx.addIssue({ code: "custom", path: ["poll_vote"], message: "required for poll_vote" });
      if (body.reply_to == null)
        ctx.addIssue({
          code: "custom",
          path: ["reply_to"],
          message: "required for poll_vote: the poll voted on",
        });
      if (body.content != null || body.media_url != null)
        ctx.addIssue({ code: "custom", path: ["content"], message: "a vote carries no content or media" });
    } else if (body.poll_vote) {
      ctx.addIssue({ code: "custom", path: ["poll_vote"], message: "only for poll_vote" });
    }
    if (body.type === "location") {
      if (!body.location)
        ctx.addIssue({ code: "custom", path: ["location"], message: "required for location" });
      if (body.content != null || body.media_url != null)
        ctx.addIssue({
          code: "custom",
          path: ["content"],
          message: "a location carries no content or media",
        });
    } else if (body.location) {
      ctx.addIssue({ code: "custom", path: ["location"], message: "only for location" });
    }
    if (body.type === "contacts") {
      if (!body.contacts)
        ctx.addIssue({ code: "custom", path: ["contacts"], message: "required for contacts" });
      if (body.content != null || body.media_url != null)
        ctx.addIssue({
          code: "custom",
          path: ["content"],
          message: "contact cards carry no content or media",
        });
    } else if (body.contacts) {
      ctx.addIssue({ code: "custom", path: ["contacts"], message: "only for contacts" });
    }
    if (
      !["text", "location", "contacts", "interactive_reply", "poll_vote"].includes(body.type) &&
      body.media_url == null
    ) {
      ctx.addIssue({ code: "custom", path: ["media_url"], message: `required for ${body.type}` });
    }
  });

/** A contact's reaction on a message of the chat (docs/messages.md, Replies and reactions). */
export const InboundReactionBody = z.strictObject({
  from_number: PhoneNumber,
  message_id: ReactionSchema.shape.message_id,
  emoji: ReactionSchema.shape.emoji,
});

export const ReceivedQuery = z.object({
  to_number: PhoneNumber.openapi({
    param: { name: "to_number", in: "query" },
    description: "The recipient whose phone to read.",
  }),
});

/** A message as a sandbox recipient's phone received it (one-time codes masked, unless `SANDBOX_SHOW_CODES`). */
export const ReceivedSchema = z
  .object({
    message_id: z.uuid(),
    to_number: z.string(),
    type: z.enum(STORED_TYPES),
    content: z
      .string()
      .nullable()
      .openapi({ description: "The text or caption; a location's name or address." }),
    media_url: z.string().nullable(),
    location: LocationSchema.nullable().openapi({ description: "A `location` message's point and place." }),
    interactive: InteractiveSchema.nullable().openapi({
      description: "An `interactive` message's buttons or list.",
    }),
    contacts: z
      .array(ContactCardSchema)
      .nullable()
      .openapi({ description: "A `contacts` message's cards, as the phone shows them." }),
    poll: PollSchema.nullable().openapi({
      description: "A `poll` message's question and options, as the phone shows them.",
    }),
    reply_to: z
      .uuid()
      .nullable()
      .openapi({ description: "The message it quotes, or that a reaction reacts to." }),
    received_at: z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" }),
  })
  .openapi("SandboxReceivedMessage");

export const ReceivedEnvelope = z.object({ success: z.literal(true), data: z.array(ReceivedSchema) });

const Until = z.iso.datetime({ offset: true }).max(64).nullable();
const Quota = z.int32().min(-1).max(1_000_000);

/**
 * Body of `POST /sandbox/sessions/{id}/health`: the `health` a Session shows (the `SessionHealth`
 * schema), without `checked_at`; every field required, null clearing it.
 */
export const HealthBody = z
  .strictObject({
    timelock: z.strictObject({ active: z.boolean(), until: Until }).nullable(),
    cap: z
      .strictObject({
        level: z.string().trim().min(1).max(40).openapi({ example: "CAPPED" }),
        used: Quota.openapi({ example: 1000 }),
        total: Quota.openapi({ example: 1000 }),
        cycle_end: Until,
      })
      .nullable(),
    quality: SessionHealthSchema.shape.quality,
  })
  .openapi("SandboxHealthRequest");
