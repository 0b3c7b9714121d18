// DOM helpers of the console. Every value from the API reaches the page as a text node or an
// attribute set through the DOM, never as HTML, so a message body such as "<img onerror=…>" is
// shown as the characters it is.

/**
 * Builds an element. `attrs` are attributes (`true` → present, null/false → absent), except
 * `on<event>` functions, which become listeners. Children are nodes or values shown as text;
 * arrays are flattened and null/false skipped.
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...unknown} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value == null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child == null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Replaces every child of `element` with `children` (as {@link h} takes them). */
export function fill(element, ...children) {
  element.replaceChildren();
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child == null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
}

/** An API timestamp (ISO 8601 UTC) in the browser's local time, or "—" for none. */
export function formatTime(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
}

/** A `<time>` element for an API timestamp: local time shown, the UTC value as its `datetime`. */
export function timeElement(iso) {
  return iso ? h("time", { datetime: iso, title: iso }, formatTime(iso)) : h("span", { class: "muted" }, "—");
}

/** A status badge: `status` as text, with a class per value for its colour. */
export function badge(status) {
  return h("span", { class: `badge badge-${String(status).replace(/[^a-z_]/g, "")}` }, status);
}

/**
 * A table that scrolls sideways on narrow screens instead of widening the page.
 * @param {string[]} headings
 * @param {unknown[][]} rows cells as {@link h} children
 * @param {string} [caption]
 */
export function table(headings, rows, caption) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      {},
      caption ? h("caption", { class: "visually-hidden" }, caption) : null,
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          headings.map((heading) => h("th", { scope: "col" }, heading)),
        ),
      ),
      h(
        "tbody",
        {},
        rows.map((cells) =>
          h(
            "tr",
            {},
            cells.map((cell) => h("td", {}, cell)),
          ),
        ),
      ),
    ),
  );
}

/** A `<dl>` of label → value pairs; values are {@link h} children. */
export function details(pairs) {
  return h(
    "dl",
    { class: "details" },
    pairs.map(([label, value]) => [h("dt", {}, label), h("dd", {}, value ?? "—")]),
  );
}

/** Text longer than `max` characters, cut with an ellipsis (the whole text in `title`). */
export function truncate(text, max = 60) {
  if (text == null) return h("span", { class: "muted" }, "—");
  const chars = [...String(text)];
  return chars.length <= max ? String(text) : h("span", { title: text }, `${chars.slice(0, max).join("")}…`);
}

/** A labelled form field: `<label>` then the control; `id` ties them together. */
export function field(label, control, hint) {
  return h(
    "div",
    { class: "field" },
    h("label", { for: control.id }, label),
    control,
    hint ? h("p", { class: "hint muted" }, hint) : null,
  );
}

/** A `<select>` of [value, label] options with `selected` chosen. */
export function select(attrs, options, selected = "") {
  return h(
    "select",
    attrs,
    options.map(([value, label]) => h("option", { value, selected: value === selected }, label)),
  );
}

/**
 * The buttons of a cursor-paged list (the API's `meta.prev_cursor` and `meta.next_cursor`):
 * "← Newer" and "Older →", each disabled without its cursor, each calling `go(cursor)`.
 */
export function pager(meta, go) {
  const newer = h("button", { type: "button", class: "secondary", disabled: !meta.prev_cursor }, "← Newer");
  const older = h("button", { type: "button", class: "secondary", disabled: !meta.next_cursor }, "Older →");
  newer.addEventListener("click", () => go(meta.prev_cursor));
  older.addEventListener("click", () => go(meta.next_cursor));
  return [newer, older];
}
