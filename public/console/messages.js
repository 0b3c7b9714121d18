// Messages: the list with the API's filters and cursor paging (the filters live in the hash, so
// back and forward work), a message's timeline and metadata, and a form that sends a test text.
// An incoming message's kept media is shown inline (media.js): a thumbnail of an image in the
// list, the image, video, audio or a download link on the message's page. A location's place and
// map link are on its page (location.js), and so are an interactive message's buttons or list and
// a contact's tap on one, linked to the message tapped (interactive.js); an incoming message still
// `delivered` can be marked read there (docs/messages.md, Chat actions).

import { api, problemBox, withButton } from "./api.js";
import { chatActions } from "./chat-actions.js";
import { contactCardsSection } from "./contact-cards.js";
import { badge, details, field, fill, h, pager, select, table, timeElement, truncate } from "./dom.js";
import { interactiveSection } from "./interactive.js";
import { listText, locationSection } from "./location.js";
import { MediaCache, mediaState, showMedia } from "./media.js";
import { pollSection } from "./poll.js";

const STATUSES = ["queued", "scheduled", "sent", "delivered", "read", "failed"];
/** The types the list's Type filter offers (`interactive_reply`, a contact's tap, is incoming only). */
const TYPES = [
  "text",
  "image",
  "video",
  "audio",
  "document",
  "sticker",
  "location",
  "contacts",
  "interactive",
  "poll",
  "interactive_reply",
];
/** Statuses a message can still move on from: the list and the detail refresh while one is shown. */
const MOVING = new Set(["queued", "scheduled", "sent", "delivered"]);
const POLL_MS = 2000;
/** Query parameters of `GET /v1/chatapp/messages` the console sets. */
const FILTERS = [
  "filter[status]",
  "filter[direction]",
  "filter[type]",
  "filter[to_number]",
  "session_id",
  "time_from",
  "time_to",
  "limit",
];

/** Draws the list page or, with `context.id`, one message. */
export function render(view, context) {
  return context.id ? renderMessage(view, context.id) : renderList(view, context);
}

/** A `datetime-local` value (the browser's zone) as ISO 8601 UTC, or "" when empty. */
function toIso(local) {
  if (!local) return "";
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

/** An ISO 8601 value as a `datetime-local` value in the browser's zone. */
function toLocalInput(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

function renderList(view, context) {
  const params = context.params;
  const out = h("div", { "aria-live": "polite" });
  const list = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  const pages = h("p", { class: "toolbar" });
  let timer = null;
  let stopped = false;
  let sessions = [];
  const media = new MediaCache();

  const query = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ""]));
  query.cursor = params.get("cursor") ?? "";

  function go(next) {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(next)) if (value) search.set(name, value);
    location.hash = `#/messages${search.size ? `?${search}` : ""}`;
  }

  async function load() {
    if (timer) clearTimeout(timer);
    timer = null;
    try {
      const page = await api("GET", "/v1/chatapp/messages", { query });
      if (stopped) return;
      fill(list, messageTable(page.data));
      media.keepOnly(page.data.map((message) => message.id));
      fill(
        pages,
        pager(page.meta, (cursor) => go({ ...query, cursor })),
      );
      if (live.checked && page.data.some((message) => MOVING.has(message.status)))
        timer = setTimeout(load, POLL_MS);
    } catch (error) {
      if (!stopped) fill(list, problemBox(error));
    }
  }

  /** An incoming message's media in the list: a thumbnail of a kept image, else a short note. */
  function mediaCell(message) {
    const box = h("div", { class: "media media-compact" });
    showMedia(box, message, media, { compact: true });
    return box;
  }

  function messageTable(messages) {
    if (messages.length === 0) return h("p", { class: "muted" }, "No messages match.");
    return table(
      ["Created", "To", "From", "Status", "Type", "Content", ""],
      messages.map((message) => [
        timeElement(message.created_at),
        message.to_number,
        message.from_number ?? "—",
        [
          badge(message.status),
          message.reason ? h("span", { class: "muted small" }, ` ${message.reason}`) : null,
        ],
        message.type,
        mediaState(message)
          ? [mediaCell(message), truncate(message.content, 40)]
          : truncate(listText(message), 40),
        h("a", { href: `#/messages/${encodeURIComponent(message.id)}` }, "Details"),
      ]),
      "Messages",
    );
  }

  // The filter form.
  const sessionSelect = select(
    { id: "filter-session", name: "session_id" },
    [["", "Any session"]],
    query.session_id,
  );
  const form = h(
    "form",
    { class: "panel filters", id: "message-filters" },
    h(
      "div",
      { class: "grid" },
      field(
        "Status",
        select(
          { id: "filter-status", name: "filter[status]" },
          [["", "Any"], ...STATUSES.map((s) => [s, s])],
          query["filter[status]"],
        ),
      ),
      field(
        "Direction",
        select(
          { id: "filter-direction", name: "filter[direction]" },
          [
            ["", "Any"],
            ["outgoing", "outgoing"],
            ["incoming", "incoming"],
          ],
          query["filter[direction]"],
        ),
      ),
      field(
        "Type",
        select(
          { id: "filter-type", name: "filter[type]" },
          [["", "Any"], ...TYPES.map((t) => [t, t])],
          query["filter[type]"],
        ),
      ),
      field("Session", sessionSelect),
      field(
        "To number",
        h("input", {
          id: "filter-to",
          name: "filter[to_number]",
          value: query["filter[to_number]"],
          placeholder: "+14155552671",
        }),
      ),
      field(
        "From",
        h("input", {
          id: "filter-from",
          name: "time_from",
          type: "datetime-local",
          value: toLocalInput(query.time_from),
        }),
      ),
      field(
        "To",
        h("input", {
          id: "filter-until",
          name: "time_to",
          type: "datetime-local",
          value: toLocalInput(query.time_to),
        }),
      ),
      field(
        "Per page",
        select(
          { id: "filter-limit", name: "limit" },
          ["10", "25", "50", "100"].map((n) => [n, n]),
          query.limit || "10",
        ),
      ),
    ),
    h(
      "p",
      { class: "toolbar" },
      h("button", { type: "submit" }, "Apply filters"),
      h("a", { href: "#/messages" }, "Clear"),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const next = {};
    for (const name of FILTERS) next[name] = String(data.get(name) ?? "").trim();
    next.time_from = toIso(next.time_from);
    next.time_to = toIso(next.time_to);
    if (next.limit === "10") next.limit = "";
    const same = FILTERS.every((name) => (next[name] ?? "") === (query[name] ?? "")) && !query.cursor;
    if (same) load();
    else go(next);
  });

  const refresh = h("button", { type: "button", class: "secondary", id: "refresh-messages" }, "Refresh");
  refresh.addEventListener("click", () => withButton(refresh, out, load));
  const live = h("input", { type: "checkbox", id: "live-messages", checked: true });
  live.addEventListener("change", () => (live.checked ? load() : timer && clearTimeout(timer)));

  // The send form.
  const sendOut = h("div", { "aria-live": "polite" });
  const fromSelect = select({ id: "send-session", name: "chatapp_session_id", required: true }, [
    ["", "Loading sessions…"],
  ]);
  const sendForm = h(
    "form",
    { class: "panel", id: "send-form", "aria-labelledby": "send-title" },
    h("h2", { id: "send-title" }, "Send a test message"),
    h(
      "div",
      { class: "grid" },
      field("From session", fromSelect),
      field(
        "To",
        h("input", {
          id: "send-to",
          name: "to_number",
          required: true,
          placeholder: "+14155552671",
          autocomplete: "off",
        }),
        "International format; separate several numbers with commas.",
      ),
    ),
    field(
      "Text",
      h("textarea", { id: "send-content", name: "content", required: true, rows: 3, maxlength: 4096 }),
    ),
    h("p", {}, h("button", { type: "submit" }, "Send")),
    sendOut,
  );
  sendForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(sendForm);
    const button = sendForm.querySelector("button[type=submit]");
    withButton(button, sendOut, async () => {
      const result = await api("POST", "/v1/chatapp/messages", {
        body: {
          chatapp_session_id: String(data.get("chatapp_session_id")),
          to_number: String(data.get("to_number"))
            .split(",")
            .map((n) => n.trim())
            .filter(Boolean),
          type: "text",
          content: String(data.get("content")),
        },
      });
      const { count, total_cost, new_balance } = result.data;
      fill(
        sendOut,
        h(
          "p",
          { class: "success", role: "status" },
          `${result.message} ${count} message${count === 1 ? "" : "s"}, cost ${total_cost.toFixed(2)}, balance ${new_balance.toFixed(2)}.`,
        ),
      );
      sendForm.querySelector("textarea").value = "";
      context.refreshAccount();
      await load();
    });
  });

  async function loadSessions() {
    try {
      ({ sessions } = await api("GET", "/v1/chatapp/sessions"));
      for (const session of sessions) {
        const label = `${session.phone_number ?? session.id} (${session.status})`;
        sessionSelect.append(
          h("option", { value: session.id, selected: session.id === query.session_id }, label),
        );
      }
      const connected = sessions.filter((session) => session.status === "connected");
      fill(
        fromSelect,
        connected.length === 0
          ? h("option", { value: "" }, "No connected session: link one first")
          : connected.map((session) =>
              h("option", { value: session.id }, `${session.phone_number} (${session.id.slice(0, 8)})`),
            ),
      );
    } catch (error) {
      fill(sendOut, problemBox(error));
    }
  }

  fill(
    view,
    h("h1", {}, "Messages"),
    sendForm,
    h("h2", {}, "Sent and received"),
    form,
    h(
      "p",
      { class: "toolbar" },
      refresh,
      h("label", { class: "inline", for: "live-messages" }, live, " Update while messages are on their way"),
    ),
    out,
    list,
    pages,
  );
  loadSessions();
  load();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    media.clear();
  };
}

/**
 * The stages of an incoming message with their times: received (it is stored `delivered`, with
 * `delivered_at` the time it came: `incomingRow` in src/db/queries/messages.ts), then read once
 * the session marked it read (docs/messages.md, Chat actions).
 */
function incomingTimeline(message) {
  const stages = [
    ["Received", message.delivered_at ?? message.created_at],
    ["Read", message.read_at],
  ];
  return h(
    "ol",
    { class: "timeline", id: "timeline" },
    stages.map(([label, at]) =>
      h(
        "li",
        { class: at ? "done" : "todo" },
        h("strong", {}, label),
        " ",
        at ? timeElement(at) : h("span", { class: "muted" }, "not yet"),
      ),
    ),
  );
}

/** The stages of a message with their times: queued → sent → delivered → read, or failed. */
function timeline(message) {
  if (message.direction === "incoming") return incomingTimeline(message);
  const stages = [
    ["Queued", message.created_at],
    ["Sent", message.sent_at],
    ["Delivered", message.delivered_at],
    ["Read", message.read_at],
  ];
  if (message.status === "scheduled") stages[0] = ["Scheduled", message.created_at];
  const items = stages.map(([label, at]) =>
    h(
      "li",
      { class: at ? "done" : "todo" },
      h("strong", {}, label),
      " ",
      at ? timeElement(at) : h("span", { class: "muted" }, "not yet"),
    ),
  );
  if (message.status === "failed") {
    const reached = stages.filter(([, at]) => at).length;
    items.splice(
      reached,
      items.length - reached,
      h(
        "li",
        { class: "failed" },
        h("strong", {}, "Failed"),
        " ",
        timeElement(message.updated_at),
        ` — ${message.reason ?? "no reason given"}`,
      ),
    );
  }
  return h("ol", { class: "timeline", id: "timeline" }, items);
}

/** Whether a message's page offers "Mark read": a contact's message not read yet. */
function canMarkRead(message) {
  return message.direction === "incoming" && message.status === "delivered";
}

/**
 * Replaces `element`'s children with `nodes` (null skipped) unless they are equal already
 * (`Node.isEqualNode`): a poll that changes nothing leaves a link under the keyboard's focus, and
 * a selection, where they are.
 */
function refill(element, ...nodes) {
  const next = nodes.filter((node) => node != null);
  const same =
    next.length === element.childNodes.length &&
    next.every((node, i) => node.isEqualNode(element.childNodes[i]));
  if (!same) fill(element, next);
}

function renderMessage(view, id) {
  let timer = null;
  let stopped = false;
  // Each read of the message takes the next number, and so does each answer of Mark read: a read
  // answered after a newer one was drawn is dropped, so a poll in flight cannot draw "delivered"
  // over the message Mark read just drew as "read".
  let latest = 0;
  const body = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  // What the message's type adds: a location's place, an interactive message's buttons or list, a tap.
  const byType = h("div");
  const metadata = h("div");
  // The media lives outside `body` and `metadata`, drawn again on every poll: a video keeps playing.
  const media = new MediaCache();
  const mediaBox = h("div", { class: "media", id: "message-media", "aria-live": "polite" });
  const mediaSection = h(
    "section",
    { "aria-labelledby": "media-title", hidden: true },
    h("h2", { id: "media-title" }, "Media"),
    mediaBox,
  );
  // Mark read and its outcome live outside `body` too: a poll keeps the outcome and the button's
  // state while the call is on its way.
  const readButton = h("button", { type: "button", id: "mark-read" }, "Mark read");
  const actions = h("p", { class: "toolbar", hidden: true }, readButton);
  const readOut = h("div", { id: "mark-read-result", "aria-live": "polite" });
  // Delete and edit, for a message the session sent; each answer is drawn as a read is.
  const sentActions = chatActions(id, (message) => {
    if (stopped) return;
    latest += 1;
    show(message);
  });
  readButton.addEventListener("click", () =>
    withButton(readButton, readOut, async () => {
      const result = await api("POST", `/v1/chatapp/messages/${encodeURIComponent(id)}/read`);
      if (stopped) return;
      const { marked } = result;
      fill(
        readOut,
        h(
          "p",
          { class: "success", role: "status" },
          `Marked ${marked} message${marked === 1 ? "" : "s"} read.`,
        ),
      );
      latest += 1;
      show(result.data);
    }),
  );

  /** Draws `message`, and reads it again in a while when it can still move. */
  function show(message) {
    if (timer) clearTimeout(timer);
    timer = null;
    actions.hidden = !canMarkRead(message);
    sentActions.update(message);
    fill(
      body,
      h("p", { id: "message-status" }, badge(message.status)),
      h("h2", {}, "Timeline"),
      timeline(message),
      h("h2", {}, "Message"),
      details([
        ["Id", h("span", { class: "mono" }, message.id)],
        ["Direction", message.direction],
        ["Session", message.chatapp_session_id],
        ["From", message.from_number],
        ["To", message.to_number],
        ["Type", message.type],
        ["Content", message.content],
        ["Media URL", message.media_url],
        ["Cost", message.cost.toFixed(2)],
        ["Reason", message.reason],
        ["Provider message id", message.provider_message_id],
        ["OTP", message.otp_id],
        ["Created", timeElement(message.created_at)],
        ["Updated", timeElement(message.updated_at)],
      ]),
    );
    refill(
      byType,
      locationSection(message),
      contactCardsSection(message),
      interactiveSection(message),
      pollSection(message),
    );
    fill(
      metadata,
      h("h2", {}, "Metadata"),
      h("pre", { class: "json" }, JSON.stringify(message.metadata, null, 2)),
    );
    mediaSection.hidden = !mediaState(message);
    showMedia(mediaBox, message, media);
    if (MOVING.has(message.status)) timer = setTimeout(load, POLL_MS);
  }

  async function load() {
    latest += 1;
    const ticket = latest;
    try {
      const { data: message } = await api("GET", `/v1/chatapp/messages/${encodeURIComponent(id)}`);
      if (!stopped && ticket === latest) show(message);
    } catch (error) {
      if (!stopped && ticket === latest) fill(body, problemBox(error));
    }
  }
  fill(
    view,
    h("p", {}, h("a", { href: "#/messages" }, "← Messages")),
    h("h1", {}, "Message"),
    actions,
    readOut,
    sentActions.element,
    body,
    byType,
    mediaSection,
    metadata,
  );
  load();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    media.clear();
  };
}
