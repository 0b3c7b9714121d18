// Interactive messages in the console (docs/messages.md, Sending messages → Buttons and lists): an
// `interactive` message's header, body, footer and its reply buttons or list, as its
// `metadata.interactive` keeps them in the Cloud API's shape; and an `interactive_reply`, a
// contact's tap, with the button or row chosen and a link to the message it answers. Every value
// reaches the page through h(), as text or an attribute.

import { details, h, table } from "./dom.js";

/**
 * The buttons or list a message carries: `metadata.interactive` of an `interactive` message, when
 * it has a body and the action its kind needs; else null.
 * @returns {{type: "button" | "list", header?: {type: "text", text: string}, body: {text: string},
 *   footer?: {text: string}, action: {buttons?: {type: "reply", reply: {id: string, title: string}}[],
 *   button?: string, sections?: {title?: string, rows: {id: string, title: string, description?: string}[]}[]}} | null}
 */
export function interactiveOf(message) {
  const interactive = message.type === "interactive" ? message.metadata?.interactive : null;
  if (!interactive || typeof interactive.body?.text !== "string") return null;
  if (interactive.type === "button" && Array.isArray(interactive.action?.buttons)) return interactive;
  if (interactive.type === "list" && Array.isArray(interactive.action?.sections)) return interactive;
  return null;
}

/**
 * The tap a message records: `metadata.interactive_reply` of an `interactive_reply` message, when
 * it names a choice; else null.
 * @returns {{type: "button_reply" | "list_reply", id: string, title: string, description?: string} | null}
 */
export function tapOf(message) {
  const tap = message.type === "interactive_reply" ? message.metadata?.interactive_reply : null;
  return tap && typeof tap.id === "string" && typeof tap.title === "string" ? tap : null;
}

/** A choice's label drawn as a button a contact sees, but not one to press here. */
function choice(title, id) {
  return h("span", { class: "choice", id }, title);
}

/** A choice's id, the value a tap answers with. */
function choiceId(id) {
  return h("code", { class: "choice-id break" }, id);
}

/** The reply buttons: each label with its id. */
function buttonsOf(interactive) {
  return [
    h("h3", { class: "small-heading" }, "Buttons"),
    h(
      "ul",
      { class: "choices", id: "interactive-buttons" },
      interactive.action.buttons.map(({ reply }) =>
        h("li", {}, choice(reply.title), " ", h("span", { class: "muted small" }, "id "), choiceId(reply.id)),
      ),
    ),
  ];
}

/** The list: the label of the button that opens it, then each section's rows. */
function listOf(interactive) {
  const { button, sections } = interactive.action;
  return [
    h("p", { class: "choices" }, "Opened by ", choice(button, "interactive-list-button")),
    sections.map((section) =>
      h(
        "section",
        { class: "interactive-section" },
        section.title ? h("h3", { class: "small-heading" }, section.title) : null,
        table(
          ["Title", "Description", "Id"],
          section.rows.map((row) => [
            row.title,
            row.description ?? h("span", { class: "muted" }, "—"),
            choiceId(row.id),
          ]),
          section.title ? `Rows of ${section.title}` : "Rows",
        ),
      ),
    ),
  ];
}

/** An `interactive` message's section: header, body and footer, then its buttons or list. */
function interactiveBlock(interactive) {
  const kind = interactive.type === "button" ? "Reply buttons" : "List";
  return h(
    "section",
    { "aria-labelledby": "interactive-title", id: "message-interactive" },
    h("h2", { id: "interactive-title" }, kind),
    details([
      [
        "Header",
        interactive.header ? h("span", { id: "interactive-header" }, interactive.header.text) : null,
      ],
      ["Body", h("span", { class: "preview-text", id: "interactive-body" }, interactive.body.text)],
      [
        "Footer",
        interactive.footer ? h("span", { id: "interactive-footer" }, interactive.footer.text) : null,
      ],
    ]),
    interactive.type === "button" ? buttonsOf(interactive) : listOf(interactive),
  );
}

/** An `interactive_reply`'s section: the choice tapped and the message it answers. */
function tapBlock(tap, replyTo) {
  return h(
    "section",
    { "aria-labelledby": "tap-title", id: "message-tap" },
    h("h2", { id: "tap-title" }, "Tap"),
    h("p", { id: "tap-choice" }, "Tapped: ", h("strong", {}, tap.title)),
    details(
      [
        ["Kind", tap.type === "list_reply" ? "A list's row" : "A reply button"],
        ["Id", h("code", { class: "break", id: "tap-id" }, tap.id)],
        tap.description != null
          ? ["Description", h("span", { id: "tap-description" }, tap.description)]
          : null,
        [
          "Answers",
          replyTo
            ? [
                h(
                  "a",
                  { href: `#/messages/${encodeURIComponent(replyTo)}`, id: "tap-answers" },
                  "The message tapped",
                ),
                " ",
                h("span", { class: "mono muted small" }, replyTo),
              ]
            : h("span", { class: "muted" }, "not known"),
        ],
      ].filter(Boolean),
    ),
  );
}

/**
 * The section a message's page adds for an interactive message (its buttons or list) or a tap
 * (what was chosen, and a link to the message tapped); null for any other message.
 */
export function interactiveSection(message) {
  const interactive = interactiveOf(message);
  if (interactive) return interactiveBlock(interactive);
  const tap = tapOf(message);
  return tap ? tapBlock(tap, message.reply_to ?? null) : null;
}
