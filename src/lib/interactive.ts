import { z } from "zod";

/*
 * Interactive messages (docs/messages.md, Sending messages → Buttons and lists): reply buttons and lists, in
 * the shape of the Cloud API's `interactive` object (Meta's OpenAPI document, `InteractiveObject`
 * with `HeaderObject` of type `text`, `BodyObject`, `FooterObject`, and `ActionObject`'s reply
 * `buttons` or list `button` and `sections` of `SectionObject` rows), with Meta's limits. One
 * shape serves every gateway that sends them; each gateway's adapter maps it to its own request.
 * A contact's tap comes back as an incoming `interactive_reply` message ({@link InteractiveReply}).
 */

/** Most reply buttons on one message (`ActionObject.buttons.maxItems`). */
export const MAX_REPLY_BUTTONS = 3;
/** Most sections of a list (`ActionObject.sections.maxItems`). */
export const MAX_LIST_SECTIONS = 10;
/**
 * Most rows of a list in all its sections (Meta, "Interactive list messages": "10 rows maximum
 * across all sections"; the document bounds each section's `rows` by 10 alone).
 */
export const MAX_LIST_ROWS = 10;

/** A text of 1 to `max` characters (Meta's `maxLength`, in characters). */
const text = (max: number, meaning: string) => z.string().min(1).max(max).describe(meaning);

const Header = z
  .strictObject({ type: z.literal("text"), text: text(60, "The header's text, at most 60 characters.") })
  .describe("A text header (`HeaderObject` of type `text`).");
const Body = z.strictObject({ text: text(1024, "The message's text, at most 1,024 characters.") });
const Footer = z.strictObject({ text: text(60, "The footer's text, at most 60 characters.") });

const ReplyButton = z.strictObject({
  type: z.literal("reply"),
  reply: z.strictObject({
    id: text(256, "What the tap answers as `interactive_reply.id`, at most 256 characters."),
    title: text(20, "The button's label, at most 20 characters."),
  }),
});

const Row = z.strictObject({
  id: text(200, "What the choice answers as `interactive_reply.id`, at most 200 characters."),
  title: text(24, "The row's title, at most 24 characters."),
  description: text(72, "The row's description, at most 72 characters.").optional(),
});

const Section = z.strictObject({
  title: text(
    24,
    "The section's title, at most 24 characters; required when the list has several sections.",
  ).optional(),
  rows: z.array(Row).min(1).max(MAX_LIST_ROWS),
});

/** Reply buttons: a body, up to three buttons, an optional text header and footer. */
const ButtonMessage = z.strictObject({
  type: z.literal("button"),
  header: Header.optional(),
  body: Body,
  footer: Footer.optional(),
  action: z.strictObject({ buttons: z.array(ReplyButton).min(1).max(MAX_REPLY_BUTTONS) }),
});

/** A list: a body, the text of the button that opens it, and its sections of rows. */
const ListMessage = z.strictObject({
  type: z.literal("list"),
  header: Header.optional(),
  body: Body,
  footer: Footer.optional(),
  action: z.strictObject({
    button: text(20, "The label of the button that opens the list, at most 20 characters."),
    sections: z.array(Section).min(1).max(MAX_LIST_SECTIONS),
  }),
});

/**
 * An interactive message as a send takes it and `metadata.interactive` keeps it: reply buttons
 * (`type: "button"`) or a list (`type: "list"`), each choice with an id unique in the message.
 * Meta's rules beyond each field's bounds are checked here too: button titles and ids unique, at
 * most {@link MAX_LIST_ROWS} rows in all, row ids unique, and a section title on each section of a
 * list with several.
 */
export const InteractiveSchema = z
  .discriminatedUnion("type", [ButtonMessage, ListMessage])
  .superRefine((message, ctx) => {
    if (message.type === "button") {
      const buttons = message.action.buttons;
      repeated(
        buttons.map((b) => b.reply.id),
        ctx,
        (i) => ["action", "buttons", i, "reply", "id"],
      );
      repeated(
        buttons.map((b) => b.reply.title),
        ctx,
        (i) => ["action", "buttons", i, "reply", "title"],
      );
      return;
    }
    const sections = message.action.sections;
    const rows = sections.flatMap((section, s) => section.rows.map((row, r) => ({ row, s, r })));
    if (rows.length > MAX_LIST_ROWS)
      ctx.addIssue({
        code: "custom",
        path: ["action", "sections"],
        message: `at most ${MAX_LIST_ROWS} rows in all sections`,
      });
    repeated(
      rows.map(({ row }) => row.id),
      ctx,
      (i) => ["action", "sections", rows[i]?.s ?? 0, "rows", rows[i]?.r ?? 0, "id"],
    );
    if (sections.length > 1)
      sections.forEach((section, s) => {
        if (section.title === undefined)
          ctx.addIssue({
            code: "custom",
            path: ["action", "sections", s, "title"],
            message: "required when the list has several sections",
          });
      });
  });

/** An interactive message: see {@link InteractiveSchema}. */
export type Interactive = z.infer<typeof InteractiveSchema>;

/** Adds an issue at `pathOf(i)` for each value of `values` that an earlier one repeats. */
function repeated(
  values: string[],
  ctx: z.core.$RefinementCtx,
  pathOf: (index: number) => (string | number)[],
): void {
  values.forEach((value, index) => {
    if (values.indexOf(value) !== index)
      ctx.addIssue({ code: "custom", path: pathOf(index), message: "must be unique" });
  });
}

/**
 * A contact's tap on a reply button (`button_reply`) or choice of a list row (`list_reply`), as
 * an incoming `interactive_reply` message keeps it in `metadata.interactive_reply` (Meta's
 * `InteractiveButtonReplyContent` and `InteractiveListReplyContent`): the button's or row's `id`
 * as the send gave it, its `title`, and a row's `description`.
 */
export const InteractiveReplySchema = z.object({
  type: z.enum(["button_reply", "list_reply"]).describe("A reply button's tap or a list row's choice."),
  id: z.string().describe("The button's or row's id, as the interactive message was sent with it."),
  title: z.string().describe("The button's or row's title."),
  description: z.string().optional().describe("A list row's description."),
});

/** A contact's tap: see {@link InteractiveReplySchema}. */
export type InteractiveReply = z.infer<typeof InteractiveReplySchema>;

/**
 * The interactive message an outgoing `interactive` message carries to its gateway: its queue
 * message's content, the JSON of the row's `metadata.interactive` (messages/dispatch-request.ts).
 * @throws Error when `content` is not such JSON.
 */
export function interactiveOf(content: string | null): Interactive {
  return InteractiveSchema.parse(JSON.parse(content ?? "null"));
}

/** The choices of an interactive message: each button's or row's id, title and a row's description. */
export function choicesOf(message: Interactive): { id: string; title: string; description?: string }[] {
  if (message.type === "button") return message.action.buttons.map((b) => ({ ...b.reply }));
  return message.action.sections.flatMap((section) => section.rows.map((row) => ({ ...row })));
}
