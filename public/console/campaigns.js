// Campaigns: the list with each status and a progress bar that follows every campaign not final, a
// create form that reads recipients from pasted CSV (the template previewed for the first rows,
// each row's problems shown before and after the API answers), start / pause / resume / cancel,
// and a campaign's page with its recipients.

import { ApiError, api, problemBox, withButton } from "./api.js";
import {
  campaignBody,
  MEDIA_TYPES,
  placeholderText,
  previewText,
  takesContent,
  templateText,
} from "./campaign-body.js";
import { readRecipients } from "./campaign-csv.js";
import { badge, details, field, fill, h, pager, select, table, timeElement, truncate } from "./dom.js";
import { gatewayLabel } from "./gateways.js";

/** How often a page showing a campaign whose figures change reads it again (ms). */
const POLL_MS = 2000;
/**
 * How often a page showing a campaign that waits for a command (a draft, a paused campaign) reads
 * it again (ms): another client, or the API, may start, resume or cancel it meanwhile.
 */
const IDLE_POLL_MS = 4000;
/** The longest gap between reads while the page is hidden (ms): each hidden read doubles the gap. */
const HIDDEN_POLL_MAX_MS = 60_000;
/** Statuses a campaign still moves on from by itself. */
const MOVING = new Set(["running", "scheduled"]);
/**
 * Statuses no move leaves (src/moves/campaign.ts `FINISHED_CAMPAIGN_STATUSES`): a campaign in one
 * changes only by its receipts, which {@link changing} follows for a while.
 */
const FINAL = new Set(["completed", "cancelled"]);
/** How long after a campaign ends its page keeps following receipts (delivered, read) (ms). */
const RECEIPTS_MS = 120_000;
/** The parts of `stats` the bar shows, in order, each with its label (the rest of total is queued). */
const PARTS = [
  ["read", "read"],
  ["delivered", "delivered"],
  ["sent", "sent"],
  ["failed", "failed"],
  ["skipped", "skipped"],
  ["queued", "queued"],
];
/** Rows of the CSV whose rendered template the form previews. */
const PREVIEW_ROWS = 3;

/**
 * Whether a campaign's figures may still change: it runs (or waits for its time), or it ended
 * less than {@link RECEIPTS_MS} ago with messages still `sent` or `delivered`, whose receipts
 * come after the campaign has nothing left to send.
 */
function changing(campaign) {
  if (MOVING.has(campaign.status)) return true;
  const ended = Date.parse(campaign.completed_at ?? campaign.updated_at);
  const waiting = campaign.stats.sent + campaign.stats.delivered > 0;
  return waiting && Date.now() - ended < RECEIPTS_MS;
}

/**
 * How long a page waits before it reads its campaigns again (ms), or null when none of them can
 * change any more. {@link POLL_MS} while one's figures move, {@link IDLE_POLL_MS} while one is not
 * final; while the page is hidden each gap doubles the one before, up to {@link HIDDEN_POLL_MAX_MS}.
 * @param {{status: string, stats: Record<string, number>, completed_at: string|null, updated_at: string}[]} campaigns
 *   the campaigns the page shows
 * @param {number|null} previous the gap before this read (ms), null when the page just opened or
 *   became visible again
 * @param {boolean} hidden whether the page is hidden (`document.hidden`)
 * @returns {number|null}
 */
export function nextPoll(campaigns, previous, hidden) {
  let gap;
  if (campaigns.some(changing)) gap = POLL_MS;
  else if (campaigns.some((campaign) => !FINAL.has(campaign.status))) gap = IDLE_POLL_MS;
  else return null;
  return hidden ? Math.min(HIDDEN_POLL_MAX_MS, Math.max(gap, (previous ?? gap) * 2)) : gap;
}

/**
 * Runs `read` now and again after each {@link nextPoll} gap while a campaign it returns may change;
 * `read` draws and returns the campaigns shown, or null after a problem (which it shows; the reads
 * then stop until `run` is called again). A `run` while a read is on its way reads once more after
 * it, so a command's outcome is never drawn over by an older read. Coming back to a hidden page
 * reads at once.
 * @param {() => Promise<object[]|null>} read
 * @returns {{run: () => Promise<void>, stop: () => void}}
 */
function follow(read) {
  let timer = null;
  let gap = null;
  let reading = false;
  let again = false;
  let stopped = false;
  async function run() {
    if (timer) clearTimeout(timer);
    timer = null;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    let shown = null;
    try {
      shown = await read();
    } finally {
      reading = false;
    }
    if (stopped) return;
    if (again) {
      again = false;
      return run();
    }
    gap = shown ? nextPoll(shown, gap, document.hidden) : null;
    if (gap !== null) timer = setTimeout(run, gap);
  }
  const onVisibility = () => {
    if (document.hidden || stopped) return;
    gap = null;
    run();
  };
  document.addEventListener("visibilitychange", onVisibility);
  return {
    run,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisibility);
    },
  };
}

/** A campaign's gap before each message: "500 ms", or "1000–3000 ms (random)" for a range. */
function pacingText(range) {
  return range.min_ms === range.max_ms ? `${range.min_ms} ms` : `${range.min_ms}–${range.max_ms} ms (random)`;
}

/** A send window as "09:00–18:00 Europe/Berlin". */
function windowText(window) {
  return `${window.start}–${window.end} ${window.time_zone}`;
}

/**
 * The list's line under a campaign's name: its type (a template's name), pacing, the time it
 * starts at when scheduled, and its send window.
 */
function summary(campaign) {
  const parts = [
    campaign.template ? `template ${campaign.template.name}` : campaign.type,
    pacingText(campaign.delay_range),
    campaign.scheduled_at ? ["starts ", timeElement(campaign.scheduled_at)] : null,
    campaign.send_window ? `sends ${windowText(campaign.send_window)}` : null,
  ].filter(Boolean);
  return h(
    "div",
    { class: "muted small campaign-summary" },
    parts.map((part, i) => (i === 0 ? part : [" · ", part])),
  );
}

/** Draws the campaigns page or, with `context.id`, one campaign and its recipients. */
export function render(view, context) {
  return context.id ? renderCampaign(view, context) : renderList(view, context);
}

/**
 * A campaign's progress: a bar of its recipients by where they stand (read, delivered, sent,
 * failed, skipped, queued) and the same counts as text, so no part is told by colour alone.
 * Done is every recipient past `queued`.
 */
export function progress(campaign) {
  const stats = campaign.stats;
  const total = stats.total;
  const done = stats.sent + stats.delivered + stats.read + stats.failed + stats.skipped;
  const bar = h("div", {
    class: "campaign-bar",
    role: "progressbar",
    "aria-label": `Progress of ${campaign.name}`,
    "aria-valuemin": 0,
    "aria-valuemax": total,
    "aria-valuenow": done,
    "aria-valuetext": `${done} of ${total} done`,
  });
  for (const [part] of PARTS) {
    if (!stats[part] || total === 0) continue;
    const segment = h("span", { class: `campaign-seg seg-${part}`, title: `${part}: ${stats[part]}` });
    // CSSOM, not a style attribute: the page's CSP has no 'unsafe-inline' for styles.
    segment.style.width = `${(100 * stats[part]) / total}%`;
    bar.append(segment);
  }
  return h(
    "div",
    { class: "campaign-progress" },
    bar,
    h(
      "p",
      { class: "campaign-counts small" },
      h("strong", { class: "campaign-done" }, `${done} of ${total} done`),
      PARTS.map(([part, label]) => [
        " · ",
        h("span", { class: `swatch seg-${part}`, "aria-hidden": "true" }),
        h("span", { "data-part": part }, `${label} ${stats[part] ?? 0}`),
      ]),
    ),
  );
}

/**
 * The commands a campaign's status allows, as buttons: start (draft), pause (running), resume
 * (paused), cancel (any status before it ends), delete (draft). Each shows its error in `out`
 * and calls `after` once the API agreed.
 */
function commands(campaign, out, after) {
  const id = encodeURIComponent(campaign.id);
  const command = (label, cls, run) => {
    const button = h("button", { type: "button", class: cls, "data-campaign": campaign.id }, label);
    button.addEventListener("click", () =>
      withButton(button, out, async () => {
        if ((await run()) !== false) await after();
      }),
    );
    return button;
  };
  const post = (action) => () => api("POST", `/v1/chatapp/campaigns/${id}/${action}`);
  const buttons = [];
  if (campaign.status === "draft") buttons.push(command("Start", "", post("start")));
  if (campaign.status === "running") buttons.push(command("Pause", "secondary", post("pause")));
  if (campaign.status === "paused") buttons.push(command("Resume", "", post("resume")));
  if (!["completed", "cancelled", "draft"].includes(campaign.status))
    buttons.push(
      command("Cancel", "danger", async () => {
        if (!confirm(`Cancel the campaign ${campaign.name}? Messages not yet sent are refunded.`))
          return false;
        await post("cancel")();
      }),
    );
  if (campaign.status === "draft")
    buttons.push(
      command("Delete", "danger", async () => {
        if (!confirm(`Delete the draft ${campaign.name}?`)) return false;
        await api("DELETE", `/v1/chatapp/campaigns/${id}`);
      }),
    );
  return h("div", { class: "actions" }, buttons);
}

function renderList(view, context) {
  const cursor = context.params.get("cursor") ?? "";
  const out = h("div", { "aria-live": "polite" });
  const list = h("div", { id: "campaign-list" }, h("p", { class: "muted" }, "Loading…"));
  const pages = h("p", { class: "toolbar" });
  let stopped = false;
  let shown = null;
  const go = (next) => {
    location.hash = `#/campaigns${next ? `?cursor=${encodeURIComponent(next)}` : ""}`;
  };

  // Every campaign the page shows is read again while it is not final (follow), so one started,
  // paused or cancelled elsewhere shows it here.
  const following = follow(async () => {
    try {
      const page = await api("GET", "/v1/chatapp/campaigns", { query: { cursor, limit: 20 } });
      if (stopped) return null;
      // Redrawn only when something changed, so a button under the pointer stays put.
      const state = JSON.stringify(page.data.map((c) => [c.id, c.status, c.stats]));
      if (state !== shown) {
        shown = state;
        fill(list, campaignTable(page.data));
        fill(pages, pager(page.meta, go));
      }
      return page.data;
    } catch (error) {
      shown = null;
      if (!stopped) fill(list, problemBox(error));
      return null;
    }
  });
  const load = following.run;

  const after = async () => {
    context.refreshAccount();
    await load();
  };

  function campaignTable(campaigns) {
    if (campaigns.length === 0) return h("p", { class: "muted" }, "No campaigns yet.");
    return table(
      ["Name", "Status", "Progress", "Created", "Actions"],
      campaigns.map((campaign) => [
        [
          h("a", { href: `#/campaigns/${encodeURIComponent(campaign.id)}` }, campaign.name),
          summary(campaign),
        ],
        badge(campaign.status),
        progress(campaign),
        timeElement(campaign.created_at),
        commands(campaign, out, after),
      ]),
      "Campaigns",
    );
  }

  const form = createForm(async (created) => {
    fill(
      out,
      h(
        "p",
        { class: "success", role: "status" },
        `Draft “${created.data.name}” created with ${created.recipients.total} recipients`,
        created.recipients.duplicates ? ` (${created.recipients.duplicates} duplicates left out)` : "",
        ". Start it from the list.",
      ),
    );
    await load();
  });

  fill(view, h("h1", {}, "Campaigns"), out, list, pages, form);
  load();
  return () => {
    stopped = true;
    following.stop();
  };
}

/** The types the form offers, each with its label. */
const TYPES = [
  ["text", "Text"],
  ["image", "Image"],
  ["video", "Video"],
  ["audio", "Audio"],
  ["document", "Document"],
  ["template", "Template (WhatsApp Cloud API)"],
];

/**
 * The create form. Recipients come from the CSV textarea; what each of the first rows is sent
 * (the text or caption, or the template's values, filled in) and each row's problems follow what
 * is typed. A submit with problems is refused in the browser; the body holds only the fields
 * filled in (campaign-body.js). The API's per-recipient errors (`recipients.<index>.<field>`) are
 * shown on their rows, its other field errors under their fields, and all of them in the problem
 * box. `created(answer)` runs with the API's 201 body.
 */
function createForm(created) {
  const formOut = h("div", { "aria-live": "polite" });
  const sessions = h(
    "fieldset",
    { class: "events", id: "campaign-sessions" },
    h("legend", {}, "Sessions (connected ones; messages go out over them in turn)"),
    h("p", { class: "muted small" }, "Loading sessions…"),
  );
  const name = h("input", { id: "campaign-name", name: "name", required: true, maxlength: 200 });
  const type = select({ id: "campaign-type", name: "type" }, TYPES, "text");
  const mediaUrl = h("input", {
    id: "campaign-media-url",
    name: "media_url",
    type: "url",
    maxlength: 2048,
    placeholder: "https://example.com/offer.jpg",
  });
  const mediaField = field(
    "Media URL",
    mediaUrl,
    "Public https URL. The service fetches the file once, when the campaign is created.",
  );
  const content = h("textarea", {
    id: "campaign-content",
    name: "content",
    rows: 3,
    maxlength: 4096,
    placeholder: "Hi {{name}}, your code {{code}} takes 10% off.",
  });
  const contentField = field("Text", content, "Variables come from the CSV's columns.");
  const contentLabel = contentField.querySelector("label");
  const templateName = h("input", {
    id: "campaign-template-name",
    maxlength: 512,
    placeholder: "order_update",
  });
  const templateLanguage = h("input", {
    id: "campaign-template-language",
    maxlength: 16,
    placeholder: "en_US",
  });
  const templateBody = h("textarea", {
    id: "campaign-template-body",
    rows: 3,
    spellcheck: "false",
    placeholder: "{{name}}\n{{order}}",
  });
  const templateButtons = h("textarea", {
    id: "campaign-template-buttons",
    rows: 2,
    spellcheck: "false",
    placeholder: "0,url,{{order}}",
  });
  const templateSet = h(
    "fieldset",
    { class: "events", id: "campaign-template" },
    h("legend", {}, "Template (an approved one of every session; WhatsApp Cloud API sessions only)"),
    h("div", { class: "grid" }, field("Name", templateName), field("Language", templateLanguage)),
    field(
      "Body values",
      templateBody,
      "One a line, for {{1}}, {{2}}… in order; {{variable}} takes each row's value.",
    ),
    field(
      "Button parameters (optional)",
      templateButtons,
      "One a line: index,sub_type,parameter (sub_type url or quick_reply), e.g. 0,url,{{order}}.",
    ),
  );
  const pacingFixed = h("input", {
    type: "radio",
    name: "pacing",
    value: "fixed",
    id: "campaign-pacing-fixed",
    checked: true,
  });
  const pacingRange = h("input", {
    type: "radio",
    name: "pacing",
    value: "range",
    id: "campaign-pacing-range",
  });
  const delayInput = (id, value) => h("input", { id, type: "number", min: 0, max: 600000, step: 1, value });
  const delay = delayInput("campaign-delay", 500);
  const delayMin = delayInput("campaign-delay-min", 500);
  const delayMax = delayInput("campaign-delay-max", 2000);
  const fixedField = field(
    "Delay between messages (ms)",
    delay,
    "Each session waits this long before each of its messages.",
  );
  const rangeFields = h(
    "div",
    { class: "grid" },
    field("Shortest delay (ms)", delayMin),
    field(
      "Longest delay (ms)",
      delayMax,
      "Each session waits a random time in this range before each message.",
    ),
  );
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const scheduledAt = h("input", { id: "campaign-scheduled-at", type: "datetime-local" });
  const windowStart = h("input", { id: "campaign-window-start", type: "time" });
  const windowEnd = h("input", { id: "campaign-window-end", type: "time" });
  const timeZone = h("input", {
    id: "campaign-time-zone",
    value: zone,
    maxlength: 64,
    list: "campaign-time-zones",
    autocomplete: "off",
  });
  const checkNumbers = h("input", { type: "checkbox", id: "campaign-check-numbers" });
  const simulateTyping = h("input", { type: "checkbox", id: "campaign-simulate-typing" });
  const options = h(
    "details",
    { id: "campaign-options" },
    h("summary", {}, "Schedule and options"),
    h(
      "div",
      { class: "grid" },
      field("Start at (your time)", scheduledAt, "Empty: when you press Start. At most 30 days ahead."),
      field("Send only from", windowStart),
      field("Until", windowEnd, "Empty: any time. An end before the start spans midnight."),
      field("Send window time zone", timeZone, "An IANA name, e.g. Europe/Berlin."),
    ),
    h(
      "datalist",
      { id: "campaign-time-zones" },
      (Intl.supportedValuesOf?.("timeZone") ?? []).map((value) => h("option", { value })),
    ),
    h(
      "p",
      {},
      h(
        "label",
        { class: "inline", for: checkNumbers.id },
        checkNumbers,
        " Check each number is on the chat network first (skipped and refunded when not)",
      ),
      h(
        "label",
        { class: "inline", for: simulateTyping.id },
        simulateTyping,
        " Show “typing…” before each message",
      ),
    ),
  );
  const csv = h("textarea", {
    id: "campaign-csv",
    name: "csv",
    rows: 6,
    required: true,
    spellcheck: "false",
    placeholder: 'to_number,name,code\n+14155552671,Ada,ADA10\n+14155552672,"Hopper, Grace",GRACE10',
  });
  const preview = h("div", { id: "campaign-preview", "aria-live": "polite" });
  const rowsOut = h("div", { id: "campaign-rows" });
  let apiProblems = new Map();

  const form = h(
    "form",
    { class: "panel", id: "create-campaign-form", "aria-labelledby": "create-campaign-title" },
    h("h2", { id: "create-campaign-title" }, "New campaign"),
    h("div", { class: "grid" }, field("Name", name), field("Type", type)),
    sessions,
    mediaField,
    contentField,
    templateSet,
    h(
      "fieldset",
      { class: "events", id: "campaign-pacing" },
      h("legend", {}, "Pacing"),
      h(
        "p",
        {},
        h("label", { class: "inline", for: pacingFixed.id }, pacingFixed, " Fixed"),
        h("label", { class: "inline", for: pacingRange.id }, pacingRange, " Random range"),
      ),
      fixedField,
      rangeFields,
    ),
    options,
    field(
      "Recipients (CSV)",
      csv,
      "Header row: to_number, then one column per variable. Quote a value holding commas.",
    ),
    h("h3", { class: "small-heading" }, `Preview of the first ${PREVIEW_ROWS} rows`),
    preview,
    rowsOut,
    h("p", {}, h("button", { type: "submit" }, "Create draft")),
    formOut,
  );

  /** The controls an API field path names, most specific first (a path matches itself and below). */
  const controls = [
    ["name", name],
    ["chatapp_session_ids", sessions],
    ["type", type],
    ["content", content],
    ["media_url", mediaUrl],
    ["template.name", templateName],
    ["template.language", templateLanguage],
    ["template.variables.body", templateBody],
    ["template.variables.buttons", templateButtons],
    ["template", templateName],
    ["delay_between", delay],
    ["delay_range.min_ms", delayMin],
    ["delay_range", delayMax],
    ["scheduled_at", scheduledAt],
    ["send_window.start", windowStart],
    ["send_window.time_zone", timeZone],
    ["send_window", windowEnd],
    ["check_numbers", checkNumbers],
    ["simulate_typing", simulateTyping],
  ];

  /** The form's values as campaign-body.js takes them. */
  const values = () => ({
    name: name.value,
    sessionIds: [...sessions.querySelectorAll("input[name=chatapp_session_ids]:checked")].map((b) => b.value),
    type: type.value,
    content: content.value,
    mediaUrl: mediaUrl.value,
    templateName: templateName.value,
    templateLanguage: templateLanguage.value,
    templateBody: templateBody.value,
    templateButtons: templateButtons.value,
    pacing: pacingRange.checked ? "range" : "fixed",
    delayBetween: delay.value,
    delayMin: delayMin.value,
    delayMax: delayMax.value,
    scheduledAt: scheduledAt.value,
    windowStart: windowStart.value,
    windowEnd: windowEnd.value,
    timeZone: timeZone.value,
    checkNumbers: checkNumbers.checked,
    simulateTyping: simulateTyping.checked,
  });

  /**
   * Shows the controls the type and pacing use and hides the others; a hidden control is also
   * disabled, so the browser neither checks nor sends it.
   */
  function sync() {
    const chosen = type.value;
    const media = MEDIA_TYPES.includes(chosen);
    mediaField.hidden = !media;
    mediaUrl.disabled = !media;
    mediaUrl.required = media;
    contentField.hidden = !takesContent(chosen);
    content.disabled = !takesContent(chosen);
    content.required = chosen === "text";
    contentLabel.textContent =
      chosen === "text"
        ? "Text (a template: {{variable}} takes each row's value)"
        : "Caption (optional; {{variable}} takes each row's value)";
    templateSet.hidden = chosen !== "template";
    templateSet.disabled = chosen !== "template";
    templateName.required = chosen === "template";
    templateLanguage.required = chosen === "template";
    const range = pacingRange.checked;
    fixedField.hidden = range;
    delay.disabled = range;
    rangeFields.hidden = !range;
    delayMin.disabled = !range;
    delayMax.disabled = !range;
  }

  /** Clears what the API said about fields, then shows each of `errors` under its control. */
  function markFields(errors) {
    for (const note of form.querySelectorAll(".field-error")) note.remove();
    for (const marked of form.querySelectorAll("[aria-invalid]")) marked.removeAttribute("aria-invalid");
    for (const [path, messages] of Object.entries(errors)) {
      const match = controls.find(([key]) => path === key || path.startsWith(`${key}.`));
      if (!match) continue;
      const control = match[1];
      control.setAttribute("aria-invalid", "true");
      const note = h("p", { class: "error field-error small" }, `${path}: ${[].concat(messages).join("; ")}`);
      if (control.tagName === "FIELDSET") control.append(note);
      else control.closest(".field")?.append(note);
      if (options.contains(control)) options.open = true;
    }
  }

  api("GET", "/v1/chatapp/sessions")
    .then(({ sessions: all }) => {
      const boxes = all.map((session) =>
        h(
          "label",
          { class: "inline" },
          h("input", {
            type: "checkbox",
            name: "chatapp_session_ids",
            value: session.id,
            disabled: session.status !== "connected",
            checked: session.status === "connected" && all.length === 1,
          }),
          ` ${session.phone_number ?? session.id.slice(0, 8)} `,
          badge(session.status),
          h("span", { class: "muted small" }, ` ${gatewayLabel(session.gateway)}`),
        ),
      );
      fill(
        sessions,
        sessions.querySelector("legend"),
        boxes.length ? boxes : h("p", { class: "muted small" }, "No sessions yet: link one first."),
      );
    })
    .catch((error) => fill(sessions, sessions.querySelector("legend"), problemBox(error)));

  /** Reads the CSV against the message and redraws the preview and the row problems. */
  function check() {
    const current = values();
    const read = readRecipients(csv.value, placeholderText(current));
    fill(
      preview,
      read.rows.length === 0
        ? h("p", { class: "muted" }, "Paste recipients to see their messages.")
        : h(
            "ol",
            { class: "campaign-preview" },
            read.rows
              .slice(0, PREVIEW_ROWS)
              .map((row) =>
                h(
                  "li",
                  {},
                  h("span", { class: "mono" }, row.to_number || "—"),
                  ": ",
                  h("span", { class: "preview-text" }, previewText(current, row.variables)),
                ),
              ),
          ),
    );
    const flagged = read.rows
      .map((row, index) => ({ row, problems: [...row.problems, ...(apiProblems.get(index) ?? [])] }))
      .filter(({ problems }) => problems.length > 0);
    const parts = [];
    if (read.headerProblems.length > 0)
      parts.push(
        h(
          "ul",
          { class: "error", id: "campaign-header-problems" },
          read.headerProblems.map((p) => h("li", {}, p)),
        ),
      );
    if (flagged.length > 0)
      parts.push(
        h(
          "div",
          { class: "problem", id: "campaign-row-problems" },
          h("strong", {}, `${flagged.length} ${flagged.length === 1 ? "row needs" : "rows need"} a fix`),
          table(
            ["Line", "Number", "Problem"],
            flagged.map(({ row, problems }) => [String(row.line), row.to_number || "—", problems.join("; ")]),
            "Rows with problems",
          ),
        ),
      );
    else if (read.rows.length > 0 && read.headerProblems.length === 0)
      parts.push(
        h(
          "p",
          { class: "muted", id: "campaign-row-count" },
          `${read.rows.length} recipients, no problems found.`,
        ),
      );
    fill(rowsOut, parts);
    return read;
  }

  const edited = (event) => {
    if (event.target === csv || event.target === content) apiProblems = new Map();
    sync();
    check();
  };
  // Every control fires `input` as it changes, a select, radio or checkbox too (HTML, "input" event).
  form.addEventListener("input", edited);
  sync();
  check();

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    withButton(form.querySelector("button[type=submit]"), formOut, async () => {
      apiProblems = new Map();
      markFields({});
      const read = check();
      if (read.headerProblems.length > 0 || read.rows.some((row) => row.problems.length > 0)) {
        fill(formOut, h("p", { class: "error", role: "alert" }, "Fix the rows listed above first."));
        return;
      }
      if (read.rows.length === 0) {
        fill(formOut, h("p", { class: "error", role: "alert" }, "Add at least one recipient."));
        return;
      }
      const current = values();
      if (current.sessionIds.length === 0) {
        fill(formOut, h("p", { class: "error", role: "alert" }, "Choose at least one connected session."));
        return;
      }
      try {
        const answer = await api("POST", "/v1/chatapp/campaigns", { body: campaignBody(current, read.rows) });
        form.reset();
        sync();
        check();
        await created(answer);
      } catch (error) {
        // `recipients.<index>.<field>` errors go on their rows, the others under their fields;
        // the problem box lists them all.
        const errors = error instanceof ApiError ? (error.problem.errors ?? {}) : {};
        const fieldErrors = {};
        for (const [path, messages] of Object.entries(errors)) {
          const match = /^recipients\.(\d+)(?:\.(.+))?$/.exec(path);
          if (!match) {
            fieldErrors[path] = messages;
            continue;
          }
          const index = Number(match[1]);
          const said = [].concat(messages).map((m) => `${match[2] ?? "recipient"}: ${m} (API)`);
          apiProblems.set(index, [...(apiProblems.get(index) ?? []), ...said]);
        }
        markFields(fieldErrors);
        check();
        throw error;
      }
    });
  });
  return form;
}

function renderCampaign(view, context) {
  const id = encodeURIComponent(context.id);
  const cursor = context.params.get("cursor") ?? "";
  const out = h("div", { "aria-live": "polite" });
  const head = h("div", { id: "campaign-detail" }, h("p", { class: "muted" }, "Loading…"));
  const recipients = h("div", { id: "campaign-recipients" });
  const pages = h("p", { class: "toolbar" });
  let stopped = false;
  let shown = null;
  const go = (next) => {
    location.hash = `#/campaigns/${id}${next ? `?cursor=${encodeURIComponent(next)}` : ""}`;
  };

  const following = follow(async () => {
    try {
      const [{ data: campaign }, page] = await Promise.all([
        api("GET", `/v1/chatapp/campaigns/${id}`),
        api("GET", `/v1/chatapp/campaigns/${id}/recipients`, { query: { cursor, limit: 20 } }),
      ]);
      if (stopped) return null;
      const state = JSON.stringify([campaign.status, campaign.stats, campaign.eta, page.data]);
      if (state !== shown) {
        shown = state;
        fill(head, campaignDetails(campaign));
        fill(recipients, recipientTable(page.data));
        fill(pages, pager(page.meta, go));
      }
      return [campaign];
    } catch (error) {
      shown = null;
      if (!stopped) fill(head, problemBox(error));
      return null;
    }
  });
  const load = following.run;

  function campaignDetails(campaign) {
    return [
      h("h1", {}, campaign.name, " ", badge(campaign.status)),
      progress(campaign),
      commands(campaign, out, async () => {
        context.refreshAccount();
        await load();
      }),
      details(
        [
          ["Id", h("span", { class: "mono" }, campaign.id)],
          ["Type", campaign.type],
          takesContent(campaign.type)
            ? [
                campaign.type === "text" ? "Text" : "Caption",
                campaign.content == null ? null : h("span", { class: "break" }, campaign.content),
              ]
            : null,
          campaign.media_url
            ? ["Media URL", h("span", { class: "break mono small" }, campaign.media_url)]
            : null,
          campaign.template ? ["Template", templateText(campaign.template)] : null,
          ["Sessions", campaign.chatapp_session_ids.map((s) => h("div", { class: "mono small" }, s))],
          ["Delay between", pacingText(campaign.delay_range)],
          ["Scheduled for", campaign.scheduled_at ? timeElement(campaign.scheduled_at) : "when started"],
          ["Send window", campaign.send_window ? windowText(campaign.send_window) : "any time"],
          ["Check numbers", campaign.check_numbers ? "yes" : "no"],
          ["Simulate typing", campaign.simulate_typing ? "yes" : "no"],
          ["Cost", campaign.cost.toFixed(2)],
          ["Refunded", campaign.refunded.toFixed(2)],
          ["Replied", String(campaign.stats.replied)],
          ["Created", timeElement(campaign.created_at)],
          ["Started", timeElement(campaign.started_at)],
          ["Completed", timeElement(campaign.completed_at)],
          ["Estimated end", campaign.eta ? timeElement(campaign.eta) : null],
        ].filter(Boolean),
      ),
    ];
  }

  function recipientTable(rows) {
    if (rows.length === 0) return h("p", { class: "muted" }, "No recipients.");
    return table(
      ["#", "Recipient", "Status", "Reason", "Variables", "Message"],
      rows.map((row) => [
        String(row.seq),
        // A number, or the user id of a recipient known by one (docs/contacts.md, Contacts).
        row.to_number ?? row.to_user_id,
        badge(row.status),
        row.reason ?? h("span", { class: "muted" }, "—"),
        row.variables
          ? truncate(
              Object.entries(row.variables)
                .map(([name, value]) => `${name}=${value}`)
                .join(", "),
              60,
            )
          : h("span", { class: "muted" }, "—"),
        row.message_id
          ? h(
              "a",
              { class: "mono small", href: `#/messages/${encodeURIComponent(row.message_id)}` },
              row.message_id,
            )
          : h("span", { class: "muted" }, "—"),
      ]),
      "Recipients",
    );
  }

  fill(
    view,
    h("p", {}, h("a", { href: "#/campaigns" }, "← Campaigns")),
    head,
    out,
    h("h2", {}, "Recipients"),
    h("p", { class: "muted small" }, "The most recently added first."),
    recipients,
    pages,
  );
  load();
  return () => {
    stopped = true;
    following.stop();
  };
}
