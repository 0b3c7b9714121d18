// Opt-outs: the account's suppression list (numbers campaigns skip), newest first; add a number,
// remove one.

import { api, problemBox, withButton } from "./api.js";
import { badge, field, fill, h, pager, table, timeElement } from "./dom.js";

/** Draws the opt-outs page. */
export function render(view, context) {
  const cursor = context.params.get("cursor") ?? "";
  const out = h("div", { "aria-live": "polite" });
  const list = h("div", { id: "opt-out-list" }, h("p", { class: "muted" }, "Loading…"));
  const pages = h("p", { class: "toolbar" });
  const go = (next) => {
    location.hash = `#/opt-outs${next ? `?cursor=${encodeURIComponent(next)}` : ""}`;
  };

  async function load() {
    try {
      const page = await api("GET", "/v1/opt-outs", { query: { cursor, limit: 50 } });
      fill(list, optOutTable(page.data));
      fill(pages, pager(page.meta, go));
    } catch (error) {
      fill(list, problemBox(error));
    }
  }

  function optOutTable(rows) {
    if (rows.length === 0) return h("p", { class: "muted" }, "No numbers are opted out.");
    return table(
      ["Number", "Source", "Keyword", "Added", "Actions"],
      rows.map((row) => {
        const remove = h(
          "button",
          { type: "button", class: "danger", "data-number": row.to_number },
          "Remove",
        );
        remove.addEventListener("click", () =>
          withButton(remove, out, async () => {
            if (!confirm(`Remove ${row.to_number} from the opt-out list? Campaigns will message it again.`))
              return;
            await api("DELETE", `/v1/opt-outs/${encodeURIComponent(row.to_number)}`);
            await load();
            fill(out, h("p", { class: "success", role: "status" }, `Removed ${row.to_number}.`));
          }),
        );
        return [
          h("span", { class: "mono" }, row.to_number),
          badge(row.source),
          row.keyword ?? h("span", { class: "muted" }, "—"),
          timeElement(row.created_at),
          h("div", { class: "actions" }, remove),
        ];
      }),
      "Opted-out numbers",
    );
  }

  const addOut = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { class: "panel", id: "add-opt-out-form", "aria-labelledby": "add-opt-out-title" },
    h("h2", { id: "add-opt-out-title" }, "Add a number"),
    field(
      "Number",
      h("input", {
        id: "opt-out-number",
        name: "to_number",
        required: true,
        maxlength: 32,
        autocomplete: "off",
        placeholder: "+14155552671",
      }),
      "International format. Campaigns skip it; single sends and one-time codes do not check the list.",
    ),
    h("p", {}, h("button", { type: "submit" }, "Add")),
    addOut,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    withButton(form.querySelector("button[type=submit]"), addOut, async () => {
      const { data: added } = await api("POST", "/v1/opt-outs", {
        body: { to_number: String(data.get("to_number")).trim() },
      });
      form.reset();
      fill(addOut, h("p", { class: "success", role: "status" }, `${added.to_number} is opted out.`));
      await load();
    });
  });

  fill(
    view,
    h("h1", {}, "Opt-outs"),
    h(
      "p",
      { class: "muted" },
      "Numbers campaigns skip. A contact who writes STOP, UNSUBSCRIBE or CANCEL is added by itself.",
    ),
    out,
    list,
    pages,
    form,
  );
  load();
}
