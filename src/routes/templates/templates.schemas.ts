import { z } from "@hono/zod-openapi";
import { TEMPLATE_CATEGORIES } from "../../gateways/cloud-api/templates";

const timestamp = z.string().openapi({ example: "2026-11-21T09:30:12.345000Z" });

/** A cached message template (presenters/template.ts `toTemplateRecord`). */
export const TemplateSchema = z
  .object({
    id: z.string().openapi({ description: "Meta's template id.", example: "1192339204654487" }),
    name: z.string().openapi({ example: "order_update" }),
    language: z.string().openapi({ example: "en_US" }),
    category: z.string().nullable().openapi({
      description: "`AUTHENTICATION`, `MARKETING` or `UTILITY`, as Meta holds it.",
      example: "UTILITY",
    }),
    status: z.string().openapi({
      description:
        "Meta's review status: `APPROVED` (sendable), `PENDING`, `REJECTED`, `PAUSED`, `DISABLED`…",
      example: "APPROVED",
    }),
    reason: z
      .string()
      .nullable()
      .openapi({ description: "The reason Meta gave with its last status update, or null." }),
    components: z.array(z.record(z.string(), z.unknown())).openapi({
      description: "The template's components as Meta gives them (`HEADER`, `BODY`, `FOOTER`, `BUTTONS`).",
    }),
    synced_at: timestamp.openapi({ description: "When Meta last gave this template." }),
  })
  .openapi("MessageTemplate");

/** `data` of a `template.status_changed` event. */
export const TemplateStatusChangeSchema = z
  .object({
    template: TemplateSchema,
    reason: z.string().nullable().openapi({ description: "Meta's reason for the change, or null." }),
    chatapp_session_ids: z
      .array(z.uuid())
      .openapi({ description: "The account's sessions on the template's WhatsApp Business Account." }),
  })
  .openapi("TemplateStatusChange");

export const TemplateListSchema = z.object({
  success: z.literal(true),
  data: z.array(TemplateSchema),
  meta: z.object({
    synced_at: timestamp.openapi({ description: "When the list was last read whole from Meta." }),
    stale: z.boolean().openapi({
      description:
        "True when Meta could not be reached just now and the list read at `synced_at` is served instead.",
    }),
  }),
});

export const TemplateEnvelopeSchema = z.object({ success: z.literal(true), data: TemplateSchema });

export const TemplateListQuery = z.object({
  refresh: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "`true` reads the list from Meta now, whatever the cache's age." }),
});

/** A template component as sent to Meta: `type` and what Meta's create reference names, checked loosely. */
const ComponentBody = z
  .object({
    type: z.enum(["HEADER", "BODY", "FOOTER", "BUTTONS"]),
    format: z.enum(["TEXT", "IMAGE", "VIDEO", "DOCUMENT", "LOCATION"]).optional(),
    text: z.string().max(1024).optional(),
    example: z.record(z.string(), z.unknown()).optional().openapi({ type: "object" }),
    buttons: z.array(z.record(z.string(), z.unknown())).max(10).optional(),
  })
  .strict();

/**
 * The create body: `name` (lowercase letters, digits and underscores, ≤ 512: Meta's rule for
 * template names), `language` (a locale code such as `en_US`), `category` and `components` (Meta's
 * component objects, `HEADER`, `BODY`, `FOOTER`, `BUTTONS`, with the fields Meta's create reference
 * gives them; a component's unknown field is refused, so nothing the caller adds is forwarded).
 */
export const CreateTemplateBody = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(512)
      .regex(/^[a-z0-9_]+$/, "lowercase letters, digits and underscores only")
      .openapi({ example: "order_update" }),
    language: z
      .string()
      .min(2)
      .max(16)
      .regex(/^[a-z]{2,3}(_[A-Za-z]{2,4})?$/, "a locale code such as en or en_US")
      .openapi({ example: "en_US" }),
    category: z.enum(TEMPLATE_CATEGORIES),
    components: z
      .array(ComponentBody)
      .min(1)
      .max(10)
      .refine((list) => list.filter((c) => c.type === "BODY").length === 1, "exactly one BODY component")
      .openapi({
        example: [
          {
            type: "BODY",
            text: "Hello {{1}}, order {{2}} is on its way.",
          },
        ],
      }),
  })
  .openapi("NewMessageTemplate");
