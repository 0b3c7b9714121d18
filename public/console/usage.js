// Usage: the account's outgoing messages per UTC day or hour by status, and their cost, over a
// chosen range (`GET /v1/account/usage`), drawn with uPlot (public/vendor/uplot/, MIT) with the same
// numbers as a table; below it the ledger (`GET /v1/account/ledger`) of that range, filtered by
// kind and paged through `links.next`. The range, granularity and kind live in the hash
// (`#/usage?from=2026-11-01&to=2026-11-24&granularity=day&kind=charge`), so back and forward work;
// without a range the API's own default (the last 30 UTC days) is shown.

import { api, problemBox, withButton } from "./api.js";
import { badge, field, fill, h, select, table, timeElement } from "./dom.js";

const UPLOT_VERSION = "1.6.32";
const STATUSES = ["queued", "scheduled", "sent", "delivered", "read", "failed"];
/** A colour per status (bars) and for cost (line); each series is also named in the legend and table. */
const COLOURS = {
  queued: "#8a939c",
  scheduled: "#b7a3e0",
  sent: "#3f7fd1",
  delivered: "#2aa39a",
  read: "#0b5d3b",
  failed: "#a3161c",
  cost: "#1a1d21",
};
const LEDGER_KINDS = ["charge", "refund", "credit"];
const DAY_MS = 86_400_000;
const BUCKET_MS = { hour: 3_600_000, day: DAY_MS };
const LEDGER_PAGE = 25;
/** Axis steps: whole messages, and whole cents (money is shown with two decimals). */
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6];
const CENT_STEPS = WHOLE_STEPS.map((n) => n / 100);
/** The daily chart's tick steps in days: a tick every day when the labels fit, else every 2, 3, 7… */
const DAY_TICK_STEPS = [1, 2, 3, 7, 14, 28, 56, 91, 182, 364];
/** Room a day's label takes on the axis (CSS px): uPlot picks the first step whose ticks are this far apart. */
const DAY_LABEL_PX = 56;
/** The narrowest bar slot (CSS px) that still takes its count written above the bar. */
const BAR_LABEL_MIN_PX = 14;

/** Money in major units with two decimals; `signed` shows + for a credit or refund. */
export function money(amount, signed = false) {
  return new Intl.NumberFormat(undefined, {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
    signDisplay: signed ? "exceptZero" : "auto",
  }).format(amount);
}

/** A UTC day `YYYY-MM-DD` of epoch ms. */
const utcDay = (ms) => new Date(ms).toISOString().slice(0, 10);

/** A UTC day as the daily chart's axis names it, in the browser's language: "Nov 29". */
export function dayLabel(ms) {
  return new Date(ms).toLocaleDateString(undefined, { month: "short", day: "numeric", timeZone: "UTC" });
}

/**
 * The daily chart's ticks: every `step` days counted back from the last day (x in seconds, one per
 * day), so the last day, today in the default range, always has its label.
 * @param {number[]} x the days' starts (s)
 * @param {number} step days between ticks (1 or more)
 * @returns {number[]} the ticked days' starts (s), oldest first
 */
export function dayTicks(x, step) {
  const ticks = [];
  for (let i = x.length - 1; i >= 0; i -= Math.max(1, step)) ticks.unshift(x[i]);
  return ticks;
}

let uplotLoading = null;

/**
 * uPlot, loaded once from this service (its IIFE build defines the global `uPlot`; a module import
 * would not), with its stylesheet. The console's Content-Security-Policy allows both ('self').
 * @returns {Promise<any>}
 */
function loadUplot() {
  if (window.uPlot) return Promise.resolve(window.uPlot);
  uplotLoading ??= new Promise((resolve, reject) => {
    const base = `/vendor/uplot/uPlot-${UPLOT_VERSION}`;
    document.head.append(h("link", { rel: "stylesheet", href: `${base}.min.css` }));
    const script = h("script", { src: `${base}.iife.min.js` });
    script.addEventListener("load", () => resolve(window.uPlot));
    script.addEventListener("error", () => {
      uplotLoading = null;
      reject(new Error("The chart library could not be loaded."));
    });
    document.head.append(script);
  });
  return uplotLoading;
}

/**
 * The API's buckets (one per start and type, empty ones left out) as dense series over the whole
 * range: x in seconds (uPlot's unit), a count per status and the cost per bucket.
 */
function series(data) {
  const step = BUCKET_MS[data.granularity];
  const from = Date.parse(data.time_from);
  const to = Date.parse(data.time_to);
  const index = new Map();
  const x = [];
  for (let t = from; t < to; t += step) {
    index.set(t, x.length);
    x.push(t / 1000);
  }
  const counts = Object.fromEntries(STATUSES.map((status) => [status, x.map(() => 0)]));
  const cost = x.map(() => 0);
  for (const bucket of data.buckets) {
    const i = index.get(Date.parse(bucket.start));
    if (i === undefined) continue;
    for (const status of STATUSES) counts[status][i] += bucket.counts[status];
    cost[i] = Math.round((cost[i] + bucket.cost) * 100) / 100;
  }
  return { x, counts, cost, step };
}

/**
 * A stacked bar chart of the counts by status with the cost as a line on a second axis. Stacking
 * by overlap: each status's bar is drawn from zero to the sum of it and the statuses below it,
 * tallest first, so the part of it that shows is its own count; the legend shows the count itself.
 */
function drawChart(uPlot, target, data, width) {
  const { x, counts, cost, step } = series(data);
  const stacked = [];
  let running = x.map(() => 0);
  for (const status of STATUSES) {
    running = running.map((sum, i) => sum + counts[status][i]);
    stacked.push({ status, values: running });
  }
  const drawOrder = [...stacked].reverse();
  // Each bucket's messages of every status: the top of its bar.
  const totals = running;
  // Without the cursor on a bucket the legend shows the whole range's totals, as the summary does.
  const rangeCount = (status) => counts[status].reduce((sum, n) => sum + n, 0);
  const rangeCost = Math.round(cost.reduce((sum, n) => sum + n, 0) * 100) / 100;
  const bars = uPlot.paths.bars({ size: [0.7, 48], align: 0 });
  const utc = (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC");
  const half = step / 2000;
  const daily = data.granularity === "day";
  const bucketText = (seconds) => {
    const iso = new Date(seconds * 1000).toISOString();
    return daily ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
  };
  return new uPlot(
    {
      width,
      height: 320,
      tzDate: utc,
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: true, range: [x[0] - half, x[x.length - 1] + half] },
        count: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] },
        cost: { range: (_u, _min, max) => [0, Math.max(0.01, max * 1.1)] },
      },
      series: [
        {
          label: daily ? "Day (UTC)" : "Hour (UTC)",
          value: (_u, v) => (v == null ? "total" : bucketText(v)),
        },
        ...drawOrder.map(({ status }) => ({
          label: status,
          scale: "count",
          fill: COLOURS[status],
          stroke: COLOURS[status],
          width: 0,
          paths: bars,
          points: { show: false },
          value: (_u, _v, _s, i) => String(i == null ? rangeCount(status) : counts[status][i]),
        })),
        {
          label: "cost",
          scale: "cost",
          stroke: COLOURS.cost,
          width: 2,
          dash: [6, 4],
          points: { show: x.length <= 62, size: 5 },
          value: (_u, v, _s, i) => money(i == null ? rangeCost : (v ?? 0)),
        },
      ],
      hooks: { draw: [(u) => labelBars(u, x, totals)] },
      axes: [
        daily
          ? {
              scale: "x",
              space: DAY_LABEL_PX,
              incrs: DAY_TICK_STEPS.map((days) => days * 86_400),
              splits: (_u, _axis, _min, _max, incr) => dayTicks(x, Math.round(incr / 86_400)),
              values: (_u, ticks) => ticks.map((seconds) => dayLabel(seconds * 1000)),
            }
          : { scale: "x" },
        { scale: "count", label: "Messages", incrs: WHOLE_STEPS, values: (_u, ticks) => ticks.map(String) },
        {
          scale: "cost",
          side: 1,
          label: "Cost",
          grid: { show: false },
          incrs: CENT_STEPS,
          values: (_u, ticks) => ticks.map((t) => money(t)),
        },
      ],
    },
    [x, ...drawOrder.map(({ values }) => values), cost],
    target,
  );
}

/**
 * Writes each bucket's message count above its bar, as elements on uPlot's cursor layer (`u.over`,
 * the plot's box), so they are text to read and to select; left out when the bars are too narrow
 * for them (a month by hour), where the legend and the table give the numbers.
 * @param {any} u the chart
 * @param {number[]} x the buckets' starts (s)
 * @param {number[]} totals each bucket's messages
 */
function labelBars(u, x, totals) {
  for (const old of u.over.querySelectorAll(".usage-bar-label")) old.remove();
  if (u.over.clientWidth / x.length < BAR_LABEL_MIN_PX) return;
  x.forEach((start, i) => {
    if (totals[i] === 0) return;
    const bucket = new Date(start * 1000).toISOString();
    const label = h("span", { class: "usage-bar-label", "data-bucket": bucket }, String(totals[i]));
    // CSSOM, not a style attribute: the console's CSP has no 'unsafe-inline' for styles.
    label.style.left = `${u.valToPos(start, "x")}px`;
    label.style.top = `${u.valToPos(totals[i], "count")}px`;
    u.over.append(label);
  });
}

/** The usage as a table: a row per bucket and type with messages, then the totals. */
function usageTable(data) {
  const stamp = (iso) => (data.granularity === "hour" ? `${iso.slice(0, 13)}:00 UTC` : iso.slice(0, 10));
  const totals = Object.fromEntries(STATUSES.map((status) => [status, 0]));
  let cost = 0;
  let refunded = 0;
  const rows = data.buckets.map((bucket) => {
    for (const status of STATUSES) totals[status] += bucket.counts[status];
    cost += bucket.cost;
    refunded += bucket.refunded;
    return [
      h("time", { datetime: bucket.start }, stamp(bucket.start)),
      bucket.type,
      ...STATUSES.map((status) => String(bucket.counts[status])),
      money(bucket.cost),
      money(bucket.refunded),
    ];
  });
  rows.push([
    h("strong", {}, "Total"),
    "",
    ...STATUSES.map((status) => h("strong", {}, String(totals[status]))),
    h("strong", {}, money(cost)),
    h("strong", {}, money(refunded)),
  ]);
  return table(
    [data.granularity === "hour" ? "Hour" : "Day", "Type", ...STATUSES, "Cost", "Refunded"],
    rows,
    "Messages by bucket, type and status, with cost",
  );
}

/** What a ledger entry came from, in words. */
function sourceText(entry) {
  const { source } = entry;
  const parts = [source.type];
  if (source.description) parts.push(source.description);
  if (source.campaign_id) parts.push(`campaign ${source.campaign_id.slice(0, 8)}`);
  if (source.otp_id) parts.push(`OTP ${source.otp_id.slice(0, 8)}`);
  if (entry.message_count > 0)
    parts.push(`${entry.message_count} message${entry.message_count === 1 ? "" : "s"}`);
  return parts.join(" · ");
}

/** Draws the Usage page. */
export function render(view, context) {
  const params = context.params;
  const query = {
    from: params.get("from") ?? "",
    to: params.get("to") ?? "",
    granularity: params.get("granularity") === "hour" ? "hour" : "day",
    kind: LEDGER_KINDS.includes(params.get("kind")) ? params.get("kind") : "",
  };
  let stopped = false;
  let chart = null;
  let lastUsage = null;

  function go(next) {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(next))
      if (value && !(name === "granularity" && value === "day")) search.set(name, value);
    const hash = `#/usage${search.size ? `?${search}` : ""}`;
    if (location.hash === hash) load();
    else location.hash = hash;
  }

  // The range form: dates are whole UTC days, `to` included.
  const fromInput = h("input", {
    id: "usage-from",
    name: "from",
    type: "date",
    value: query.from,
    required: true,
  });
  const toInput = h("input", { id: "usage-to", name: "to", type: "date", value: query.to, required: true });
  const granularity = select(
    { id: "usage-granularity", name: "granularity" },
    [
      ["day", "Day"],
      ["hour", "Hour"],
    ],
    query.granularity,
  );
  const preset = (days) => {
    const today = Date.now() - (Date.now() % DAY_MS);
    return h(
      "button",
      {
        type: "button",
        class: "secondary",
        id: `usage-last-${days}`,
        onclick: () => go({ ...query, from: utcDay(today - (days - 1) * DAY_MS), to: utcDay(today) }),
      },
      `Last ${days} days`,
    );
  };
  const rangeForm = h(
    "form",
    { class: "panel filters", id: "usage-range" },
    h(
      "div",
      { class: "grid" },
      field("From (UTC day)", fromInput),
      field("To (UTC day, included)", toInput),
      field("Per", granularity, "By hour: at most 31 days."),
    ),
    h("p", { class: "toolbar" }, h("button", { type: "submit" }, "Show"), preset(7), preset(30)),
  );
  rangeForm.addEventListener("submit", (event) => {
    event.preventDefault();
    go({ ...query, from: fromInput.value, to: toInput.value, granularity: granularity.value });
  });

  const chartOut = h("div", { "aria-live": "polite" });
  const summary = h("p", { id: "usage-summary", class: "muted" });
  const chartBox = h("div", {
    id: "usage-chart",
    class: "usage-chart",
    role: "img",
    "aria-labelledby": "usage-summary",
  });
  const numbers = h("div", { id: "usage-table" });
  const chartSection = h(
    "section",
    { "aria-labelledby": "usage-title" },
    h("h2", { id: "usage-title" }, "Messages and cost"),
    chartOut,
    summary,
    chartBox,
    h("details", { id: "usage-numbers" }, h("summary", {}, "The numbers as a table"), numbers),
  );

  /** The range as the API takes it: from the start of `from` to the end of `to` (UTC). */
  function usageQuery() {
    const bounds = {};
    if (query.from) bounds.time_from = query.from;
    if (query.to) bounds.time_to = utcDay(Date.parse(query.to) + DAY_MS);
    return { ...bounds, granularity: query.granularity };
  }

  function width() {
    return Math.max(280, Math.min(chartSection.clientWidth || view.clientWidth || 800, 1152));
  }

  async function loadUsage() {
    fill(chartOut);
    try {
      const [uPlot, usage] = await Promise.all([
        loadUplot(),
        api("GET", "/v1/account/usage", { query: usageQuery() }),
      ]);
      if (stopped) return;
      const { data } = usage;
      lastUsage = data;
      // Without a range in the hash, the API chose one (the last 30 UTC days): show it in the form.
      if (!query.from) fromInput.value = data.time_from.slice(0, 10);
      if (!query.to) toInput.value = utcDay(Date.parse(data.time_to) - 1);
      const sent = data.buckets.reduce((n, b) => n + STATUSES.reduce((m, s) => m + b.counts[s], 0), 0);
      const cost = data.buckets.reduce((n, b) => n + b.cost, 0);
      summary.textContent = `${sent} message${sent === 1 ? "" : "s"}, cost ${money(cost)}, from ${data.time_from.slice(0, 10)} to ${utcDay(Date.parse(data.time_to) - 1)} (UTC) by ${data.granularity}.`;
      if (chart) chart.destroy();
      chartBox.replaceChildren();
      chart = drawChart(uPlot, chartBox, data, width());
      fill(
        numbers,
        data.buckets.length === 0
          ? h("p", { class: "muted" }, "No messages in this range.")
          : usageTable(data),
      );
    } catch (error) {
      if (stopped) return;
      if (chart) chart.destroy();
      chart = null;
      chartBox.replaceChildren();
      summary.textContent = "";
      fill(numbers);
      fill(chartOut, problemBox(error));
    }
  }

  // The ledger of the same range, newest first.
  const kindSelect = select(
    { id: "ledger-kind", name: "kind" },
    [["", "Any kind"], ...LEDGER_KINDS.map((kind) => [kind, kind])],
    query.kind,
  );
  kindSelect.addEventListener("change", () => go({ ...query, kind: kindSelect.value }));
  const ledgerOut = h("div", { "aria-live": "polite" });
  const ledgerRows = h("tbody");
  const ledgerTable = h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { id: "ledger" },
      h("caption", { class: "visually-hidden" }, "Ledger entries"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "Date"),
          h("th", { scope: "col" }, "Kind"),
          h("th", { scope: "col", class: "number" }, "Amount"),
          h("th", { scope: "col", class: "number" }, "Balance after"),
          h("th", { scope: "col" }, "Source"),
        ),
      ),
      ledgerRows,
    ),
  );
  const ledgerEmpty = h("p", { class: "muted", hidden: true }, "No entries match.");
  const more = h(
    "button",
    { type: "button", class: "secondary", id: "ledger-more", hidden: true },
    "Older entries",
  );
  let nextPage = null;

  function ledgerRow(entry) {
    return h(
      "tr",
      {},
      h("td", {}, timeElement(entry.created_at)),
      h("td", {}, badge(entry.kind)),
      h("td", { class: "number" }, money(entry.amount, true)),
      h("td", { class: "number" }, money(entry.balance_after)),
      h("td", {}, sourceText(entry)),
    );
  }

  function showLedger(page, append) {
    if (!append) ledgerRows.replaceChildren();
    ledgerRows.append(...page.data.map(ledgerRow));
    ledgerEmpty.hidden = ledgerRows.childElementCount > 0;
    ledgerTable.hidden = ledgerRows.childElementCount === 0;
    nextPage = page.links.next;
    more.hidden = !nextPage;
  }

  async function loadLedger() {
    fill(ledgerOut);
    const range = usageQuery();
    try {
      const page = await api("GET", "/v1/account/ledger", {
        query: {
          "filter[kind]": query.kind,
          time_from: range.time_from,
          // The ledger's time_to is inclusive: the last millisecond of the range.
          time_to: range.time_to ? new Date(Date.parse(range.time_to) - 1).toISOString() : "",
          limit: LEDGER_PAGE,
        },
      });
      if (!stopped) showLedger(page, false);
    } catch (error) {
      if (!stopped) fill(ledgerOut, problemBox(error));
    }
  }
  more.addEventListener("click", () =>
    withButton(more, ledgerOut, async () => {
      if (!nextPage) return;
      // links.next is absolute; the path and query are what the API needs.
      const next = new URL(nextPage);
      const page = await api("GET", `${next.pathname}${next.search}`);
      if (!stopped) showLedger(page, true);
    }),
  );

  function load() {
    loadUsage();
    loadLedger();
  }

  const onResize = () => {
    if (chart && lastUsage) chart.setSize({ width: width(), height: 320 });
  };
  window.addEventListener("resize", onResize);

  fill(
    view,
    h("h1", {}, "Usage"),
    rangeForm,
    chartSection,
    h(
      "section",
      { "aria-labelledby": "ledger-title" },
      h("h2", { id: "ledger-title" }, "Ledger"),
      h("div", { class: "toolbar" }, field("Kind", kindSelect)),
      ledgerOut,
      ledgerTable,
      ledgerEmpty,
      h("p", { class: "toolbar" }, more),
    ),
  );
  load();
  return () => {
    stopped = true;
    window.removeEventListener("resize", onResize);
    if (chart) chart.destroy();
  };
}
