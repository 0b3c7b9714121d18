// API keys: the account's keys (name, prefix, scopes, when created, last used and expiring),
// create one with scopes chosen from the API's own list (its secret shown once, with a copy
// button), and revoke one.

import { api, problemBox, storedKey, withButton } from "./api.js";
import { field, fill, h, pager, table, timeElement } from "./dom.js";
import { schemaEnum } from "./openapi.js";

/** What a key's prefix is: its first 11 characters (docs/api.md, API keys and scopes). */
const PREFIX_LENGTH = 11;

/** Draws the API keys page. */
export function render(view, context) {
  const cursor = context.params.get("cursor") ?? "";
  const out = h("div", { "aria-live": "polite" });
  const list = h("div", { id: "key-list" }, h("p", { class: "muted" }, "Loading…"));
  const pages = h("p", { class: "toolbar" });
  const mine = (storedKey() ?? "").slice(0, PREFIX_LENGTH);
  const go = (next) => {
    location.hash = `#/api-keys${next ? `?cursor=${encodeURIComponent(next)}` : ""}`;
  };

  async function load() {
    try {
      const page = await api("GET", "/v1/api-keys", { query: { cursor, limit: 50 } });
      fill(list, keyTable(page.data));
      fill(pages, pager(page.meta, go));
    } catch (error) {
      fill(list, problemBox(error));
    }
  }

  function keyTable(keys) {
    if (keys.length === 0) return h("p", { class: "muted" }, "No keys.");
    return table(
      ["Name", "Prefix", "Scopes", "Created", "Last used", "Expires", "Actions"],
      keys.map((key) => {
        const own = key.prefix === mine;
        const revoke = h("button", { type: "button", class: "danger", "data-key": key.id }, "Revoke");
        revoke.addEventListener("click", () =>
          withButton(revoke, out, async () => {
            const warning = own
              ? " This is the key this console is signed in with: you will be signed out."
              : "";
            if (
              !confirm(`Revoke the key ${key.name ?? key.prefix}? Requests with it fail at once.${warning}`)
            )
              return;
            await api("DELETE", `/v1/api-keys/${encodeURIComponent(key.id)}`);
            await load();
            fill(out, h("p", { class: "success", role: "status" }, `Revoked ${key.name ?? key.prefix}.`));
          }),
        );
        return [
          [
            key.name ?? h("span", { class: "muted" }, "—"),
            own ? h("div", { class: "muted small" }, "this console's key") : null,
          ],
          h("code", {}, `${key.prefix}…`),
          h("span", { class: "small" }, key.scopes.join(", ")),
          timeElement(key.created_at),
          timeElement(key.last_used_at),
          timeElement(key.expires_at),
          h("div", { class: "actions" }, revoke),
        ];
      }),
      "API keys",
    );
  }

  const createOut = h("div", { "aria-live": "polite" });
  const scopes = h(
    "fieldset",
    { class: "events", id: "key-scopes" },
    h("legend", {}, "Scopes (a write scope also reads; a key creates keys only within its own scopes)"),
  );
  schemaEnum("ApiKey", "scopes")
    .then((all) => {
      for (const scope of all)
        scopes.append(
          h(
            "label",
            { class: "inline" },
            h("input", { type: "checkbox", name: "scopes", value: scope }),
            scope === "*" ? " * (everything)" : ` ${scope}`,
          ),
        );
    })
    .catch((error) => scopes.append(problemBox(error)));
  const form = h(
    "form",
    { class: "panel", id: "create-key-form", "aria-labelledby": "create-key-title" },
    h("h2", { id: "create-key-title" }, "Create a key"),
    h(
      "div",
      { class: "grid" },
      field("Name", h("input", { id: "key-name", name: "name", required: true, maxlength: 100 })),
      field(
        "Expires (optional)",
        h("input", { id: "key-expires", name: "expires_at", type: "datetime-local" }),
        "In your browser's time zone.",
      ),
    ),
    scopes,
    h("p", {}, h("button", { type: "submit" }, "Create key")),
    createOut,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    withButton(form.querySelector("button[type=submit]"), createOut, async () => {
      const chosen = data.getAll("scopes").map(String);
      if (chosen.length === 0) {
        fill(createOut, h("p", { class: "error", role: "alert" }, "Choose at least one scope."));
        return;
      }
      const expires = String(data.get("expires_at") ?? "");
      const { data: created } = await api("POST", "/v1/api-keys", {
        body: {
          name: String(data.get("name")).trim(),
          scopes: chosen,
          ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
        },
      });
      form.reset();
      fill(createOut, secretPanel(created));
      await load();
    });
  });

  /** The new key's secret, shown this once, with a copy button (select-all when the clipboard is refused). */
  function secretPanel(created) {
    const secret = h("input", {
      id: "key-secret",
      class: "mono wide",
      readonly: true,
      value: created.api_key,
      "aria-label": "The new key's secret",
    });
    const said = h("p", { class: "small", role: "status", id: "key-copy-status" });
    const copy = h("button", { type: "button", id: "copy-key" }, "Copy");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(created.api_key);
        said.textContent = "Copied to the clipboard.";
      } catch {
        secret.focus();
        secret.select();
        said.textContent = "Selected: press Ctrl+C (⌘C on a Mac) to copy it.";
      }
    });
    const done = h("button", { type: "button", class: "secondary" }, "I have stored it");
    done.addEventListener("click", () => createOut.replaceChildren());
    return h(
      "div",
      { class: "panel secret", id: "key-created" },
      h("strong", {}, `Secret of ${created.key.name}: store it now. It is not shown again.`),
      h("p", {}, secret),
      h("p", { class: "toolbar" }, copy, done),
      said,
      h("p", { class: "muted small" }, `Scopes: ${created.key.scopes.join(", ")}`),
    );
  }

  fill(view, h("h1", {}, "API keys"), out, list, pages, form);
  load();
}
