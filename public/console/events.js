// Events: the account's event log newest first, filtered by type (the types from the API's own
// document), paged by cursor; one event's `data` as JSON.

import { api, problemBox } from "./api.js";
import { details, field, fill, h, pager, select, table, timeElement } from "./dom.js";
import { schemaEnum } from "./openapi.js";

/** Draws the events page or, with `context.id`, one event. */
export function render(view, context) {
  return context.id ? renderEvent(view, context.id) : renderList(view, context);
}

function renderList(view, context) {
  const params = context.params;
  const type = params.get("filter[type]") ?? "";
  const cursor = params.get("cursor") ?? "";
  const limit = params.get("limit") ?? "";
  const list = h("div", { id: "event-list" }, h("p", { class: "muted" }, "Loading…"));
  const pages = h("p", { class: "toolbar" });
  const go = (next) => {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(next)) if (value) search.set(name, value);
    location.hash = `#/events${search.size ? `?${search}` : ""}`;
  };

  async function load() {
    try {
      const page = await api("GET", "/v1/events", {
        query: { "filter[type]": type, cursor, limit: limit || 20 },
      });
      fill(list, eventTable(page.data));
      fill(
        pages,
        pager(page.meta, (cursor) => go({ "filter[type]": type, limit, cursor })),
      );
    } catch (error) {
      fill(list, problemBox(error));
    }
  }

  function eventTable(events) {
    if (events.length === 0)
      return h("p", { class: "muted" }, type ? "No events of this type." : "No events yet.");
    return table(
      ["Created", "Type", "Event", ""],
      events.map((event) => [
        timeElement(event.created_at),
        h("code", {}, event.type),
        h("span", { class: "mono small" }, event.id),
        h("a", { href: `#/events/${encodeURIComponent(event.id)}` }, "Open"),
      ]),
      "Events",
    );
  }

  const typeSelect = select({ id: "event-type", name: "filter[type]" }, [["", "Any type"]], type);
  schemaEnum("Event", "type")
    .then((types) => {
      for (const one of types) typeSelect.append(h("option", { value: one, selected: one === type }, one));
    })
    .catch((error) => list.before(problemBox(error)));
  const form = h(
    "form",
    { class: "toolbar", id: "event-filters" },
    field("Type", typeSelect),
    h("button", { type: "submit" }, "Filter"),
    h("a", { href: "#/events" }, "Clear"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (typeSelect.value === type && !cursor) load();
    else go({ "filter[type]": typeSelect.value, limit });
  });

  fill(
    view,
    h("h1", {}, "Events"),
    h(
      "p",
      { class: "muted" },
      "What happened in the account, newest first, kept 30 days: the events webhooks deliver.",
    ),
    form,
    list,
    pages,
  );
  load();
}

function renderEvent(view, id) {
  const body = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  fill(view, h("p", {}, h("a", { href: "#/events" }, "← Events")), h("h1", {}, "Event"), body);
  api("GET", `/v1/events/${encodeURIComponent(id)}`)
    .then(({ data: event }) =>
      fill(
        body,
        details([
          ["Type", h("code", { id: "event-type-shown" }, event.type)],
          ["Id", h("span", { class: "mono" }, event.id)],
          ["Created", timeElement(event.created_at)],
        ]),
        h("h2", {}, "Data"),
        h("pre", { class: "json", id: "event-data" }, JSON.stringify(event.data, null, 2)),
      ),
    )
    .catch((error) => fill(body, problemBox(error)));
}
