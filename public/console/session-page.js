// A session's own page (#/sessions/<id>): what it is; its health, the limits the chat network puts
// on its linked account (docs/sessions.md, Session health), read again every REFRESH_MS as the sessions list
// is (the console opens a session's live socket only to link a phone, with a link token, whose
// frames carry the public view without `health`); and a number check (docs/sessions.md, Number checks).

import { api, problemBox, withButton } from "./api.js";
import { badge, details, field, fill, h, table, timeElement } from "./dom.js";
import { gatewayLabel } from "./gateways.js";

/** How often the page reads the session again, as the sessions list does (ms). */
const REFRESH_MS = 5_000;

/** The Cloud API number's quality rating in words: the badge's colour is never the only sign. */
const QUALITY_LABELS = {
  green: "Green: high quality",
  yellow: "Yellow: medium quality",
  red: "Red: low quality",
};

/** How a number check's `on_chatapp` reads. */
const ON_CHATAPP = new Map([
  [true, "Yes"],
  [false, "No"],
  [null, "Unknown"],
]);

const notReported = () => h("span", { class: "muted" }, "Not reported");

/** `health.timelock`: active until when (local time), not active, or not reported (null). */
function timelockView(timelock) {
  if (!timelock) return notReported();
  if (!timelock.active) return "Not active";
  return [
    h("span", { class: "badge badge-limited" }, "Active"),
    timelock.until ? [" until ", timeElement(timelock.until)] : ", end not known",
  ];
}

/** `health.cap`: its level, new chats used of the cycle's total as text and a meter, the cycle end. */
function capView(cap) {
  if (!cap) return notReported();
  const level = String(cap.level);
  const limited = cap.total >= 0;
  return h(
    "div",
    { class: "cap" },
    h("span", { class: `badge badge-cap-${level.toLowerCase().replace(/[^a-z_]/g, "")}` }, level),
    limited
      ? [
          " ",
          h("span", { class: "cap-count" }, `${cap.used} of ${cap.total} new chats used`),
          h("meter", {
            class: "cap-bar",
            min: 0,
            max: Math.max(cap.total, 1),
            value: Math.min(Math.max(cap.used, 0), Math.max(cap.total, 1)),
            high: Math.max(cap.total, 1) * 0.8,
            optimum: 0,
            "aria-label": "New chats used this cycle",
          }),
        ]
      : " No cap on new chats",
    h(
      "div",
      { class: "muted small" },
      "Cycle ends ",
      cap.cycle_end ? timeElement(cap.cycle_end) : "— not reported",
    ),
  );
}

/** `health.quality`: a badge with the rating in words, or "Not rated" (null). */
function qualityView(quality) {
  if (!quality) return h("span", { class: "muted" }, "Not rated");
  return h("span", { class: `badge badge-quality-${quality}` }, QUALITY_LABELS[quality] ?? quality);
}

/** The health section's content: timelock, cap, quality and when the gateway was last read. */
function healthView(health) {
  const parts = health ?? {};
  return details([
    ["Timelock", h("span", { id: "health-timelock" }, timelockView(parts.timelock))],
    ["New chat cap", h("div", { id: "health-cap" }, capView(parts.cap))],
    ["Quality", h("span", { id: "health-quality" }, qualityView(parts.quality))],
    [
      "Checked",
      h(
        "span",
        { id: "health-checked" },
        parts.checked_at ? timeElement(parts.checked_at) : h("span", { class: "muted" }, "Never"),
      ),
    ],
  ]);
}

/** Numbers typed one a line or separated by commas, trimmed, blanks dropped. */
function parseNumbers(text) {
  return text
    .split(/[\n,;]+/)
    .map((number) => number.trim())
    .filter(Boolean);
}

/**
 * Draws session `id`'s page into `view` and reads the session again every {@link REFRESH_MS};
 * the summary and health are drawn again only when the session changed, so the live region
 * announces only changes.
 * @returns {() => void} stops the refresh
 */
export function renderSession(view, id) {
  const path = `/v1/chatapp/sessions/${encodeURIComponent(id)}`;
  const summary = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  const health = h("div", { id: "session-health-body" });
  let shown = null;
  let stopped = false;

  async function load() {
    try {
      const { session } = await api("GET", path);
      if (stopped) return;
      const state = JSON.stringify(session);
      if (state === shown) return;
      shown = state;
      fill(
        summary,
        details([
          [
            "Status",
            [
              badge(session.status),
              session.reason ? h("span", { class: "muted small" }, ` ${session.reason}`) : null,
            ],
          ],
          ["Phone", session.phone_number],
          ["Name", session.display_name],
          ["Gateway", gatewayLabel(session.gateway)],
          ["Id", h("span", { class: "mono" }, session.id)],
          ["Created", timeElement(session.created_at)],
          [
            "Messages",
            h(
              "a",
              { href: `#/messages?session_id=${encodeURIComponent(session.id)}` },
              "This session's messages",
            ),
          ],
        ]),
      );
      fill(health, healthView(session.health));
    } catch (error) {
      if (stopped) return;
      shown = null;
      fill(summary, problemBox(error));
    }
  }

  // The number check.
  const numbers = h("textarea", {
    id: "check-numbers",
    name: "numbers",
    rows: 4,
    required: true,
    autocomplete: "off",
    placeholder: "+14155552671\n+14155552672",
  });
  const checkOut = h("div", { id: "check-result", "aria-live": "polite" });
  const checkForm = h(
    "form",
    { class: "panel", id: "check-form", "aria-labelledby": "check-title" },
    h("h2", { id: "check-title", class: "small-heading" }, "Check numbers"),
    h(
      "p",
      { class: "muted small" },
      "Asks the network, through this session's linked phone, whether each number is on WhatsApp. " +
        "The network sees every check: check only numbers you mean to write to.",
    ),
    field("Numbers", numbers, "International format, one a line or separated by commas; up to 100."),
    h("p", {}, h("button", { type: "submit" }, "Check")),
    checkOut,
  );
  checkForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const button = checkForm.querySelector("button[type=submit]");
    withButton(button, checkOut, async () => {
      const { data } = await api("POST", `${path}/contacts/check`, {
        body: { numbers: parseNumbers(numbers.value) },
      });
      fill(
        checkOut,
        table(
          ["Number", "On WhatsApp", "Checked"],
          data.map((entry) => [
            h("span", { class: "mono" }, entry.number),
            h(
              "span",
              { class: `answer answer-${String(entry.on_chatapp)}` },
              ON_CHATAPP.get(entry.on_chatapp) ?? "Unknown",
            ),
            timeElement(entry.checked_at),
          ]),
          "Number check",
        ),
      );
    });
  });

  fill(
    view,
    h("p", {}, h("a", { href: "#/sessions" }, "← Sessions")),
    h("h1", {}, "Session"),
    summary,
    h(
      "section",
      { id: "session-health", "aria-labelledby": "health-title", "aria-live": "polite" },
      h("h2", { id: "health-title" }, "Health"),
      h(
        "p",
        { class: "muted small" },
        "The limits the network puts on the linked account, as its gateway reports them; times are local.",
      ),
      health,
    ),
    checkForm,
  );
  load();
  const refresher = setInterval(load, REFRESH_MS);
  return () => {
    stopped = true;
    clearInterval(refresher);
  };
}
