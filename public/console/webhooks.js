// Webhooks: endpoints (list, create with the secret shown once, enable/disable, test, delete), and
// one endpoint's deliveries with their attempts and a retry button.

import { api, problemBox, withButton } from "./api.js";
import { badge, details, field, fill, h, pager, select, table, timeElement } from "./dom.js";

/** The event types an endpoint can subscribe to, from the OpenAPI document's `webhooks`. */
async function eventTypes() {
  try {
    const response = await fetch("/openapi.json", { headers: { Accept: "application/json" } });
    const document = await response.json();
    return Object.keys(document.webhooks ?? {}).filter((type) => type !== "webhook.test");
  } catch {
    return [];
  }
}

/** The outcome of a test send or a retry: status code, duration, answer or error. */
function outcome(result) {
  const ok = result.succeeded ?? (result.status_code >= 200 && result.status_code < 300);
  return h(
    "div",
    { class: ok ? "panel success-panel" : "panel", role: "status" },
    h("strong", {}, ok ? "Delivered" : "Not delivered"),
    details([
      ["Status code", result.status_code == null ? "no answer" : String(result.status_code)],
      ["Duration", result.duration_ms == null ? null : `${result.duration_ms} ms`],
      ["Answer", result.response_excerpt ? h("code", {}, result.response_excerpt) : null],
      ["Error", result.error],
    ]),
  );
}

/** Draws the endpoints page or, with `context.id`, one endpoint's deliveries. */
export function render(view, context) {
  return context.id ? renderDeliveries(view, context) : renderEndpoints(view);
}

function renderEndpoints(view) {
  const out = h("div", { "aria-live": "polite" });
  const list = h("div", {}, h("p", { class: "muted" }, "Loading…"));

  async function load() {
    try {
      const { data } = await api("GET", "/v1/webhooks");
      fill(list, endpointTable(data));
    } catch (error) {
      fill(list, problemBox(error));
    }
  }

  function endpointTable(endpoints) {
    if (endpoints.length === 0) return h("p", { class: "muted" }, "No endpoints yet.");
    return table(
      ["URL", "Events", "State", "Secret", "Actions"],
      endpoints.map((endpoint) => {
        const id = encodeURIComponent(endpoint.id);
        const command = (label, cls, run) => {
          const button = h("button", { type: "button", class: cls }, label);
          button.addEventListener("click", () => withButton(button, out, run));
          return button;
        };
        return [
          [
            h("span", { class: "break" }, endpoint.url),
            endpoint.description ? h("div", { class: "muted small" }, endpoint.description) : null,
          ],
          endpoint.events ? endpoint.events.join(", ") : h("span", { class: "muted" }, "all"),
          [
            badge(endpoint.enabled ? "enabled" : "disabled"),
            endpoint.disabled_reason
              ? h("span", { class: "muted small" }, ` ${endpoint.disabled_reason}`)
              : null,
          ],
          h("code", {}, `${endpoint.secret_prefix}…`),
          h(
            "div",
            { class: "actions" },
            h("a", { class: "button secondary", href: `#/webhooks/${id}` }, "Deliveries"),
            command("Send test", "secondary", async () => {
              const { data } = await api("POST", `/v1/webhooks/${id}/test`);
              fill(out, h("h2", {}, `Test of ${endpoint.url}`), outcome(data));
            }),
            command(endpoint.enabled ? "Disable" : "Enable", "secondary", async () => {
              await api("PATCH", `/v1/webhooks/${id}`, { body: { enabled: !endpoint.enabled } });
              await load();
            }),
            command("Delete", "danger", async () => {
              if (!confirm(`Delete the endpoint ${endpoint.url}? Its delivery history goes with it.`)) return;
              await api("DELETE", `/v1/webhooks/${id}`);
              await load();
            }),
          ),
        ];
      }),
      "Webhook endpoints",
    );
  }

  const createOut = h("div", { "aria-live": "polite" });
  const events = h("fieldset", { class: "events" }, h("legend", {}, "Events (none checked: every type)"));
  const form = h(
    "form",
    { class: "panel", id: "create-webhook-form", "aria-labelledby": "create-webhook-title" },
    h("h2", { id: "create-webhook-title" }, "Add an endpoint"),
    field(
      "URL",
      h("input", {
        id: "webhook-url",
        name: "url",
        type: "url",
        required: true,
        placeholder: "https://example.com/webhooks",
        class: "wide",
      }),
    ),
    field(
      "Description",
      h("input", { id: "webhook-description", name: "description", maxlength: 500, class: "wide" }),
    ),
    events,
    h("p", {}, h("button", { type: "submit" }, "Add endpoint")),
    createOut,
  );
  eventTypes().then((types) => {
    for (const type of types)
      events.append(
        h(
          "label",
          { class: "inline" },
          h("input", { type: "checkbox", name: "events", value: type }),
          ` ${type}`,
        ),
      );
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    withButton(form.querySelector("button[type=submit]"), createOut, async () => {
      const chosen = data.getAll("events").map(String);
      const description = String(data.get("description") ?? "").trim();
      const { data: endpoint } = await api("POST", "/v1/webhooks", {
        body: {
          url: String(data.get("url")).trim(),
          ...(chosen.length ? { events: chosen } : {}),
          ...(description ? { description } : {}),
        },
      });
      form.reset();
      const done = h("button", { type: "button", class: "secondary" }, "I have stored it");
      done.addEventListener("click", () => createOut.replaceChildren());
      fill(
        createOut,
        h(
          "div",
          { class: "panel secret", id: "webhook-secret", role: "status" },
          h("strong", {}, "Signing secret: store it now. It is not shown again."),
          h("p", {}, h("code", { class: "break" }, endpoint.secret)),
          h(
            "p",
            { class: "muted small" },
            "Verify each delivery with it (Standard Webhooks, e.g. the standardwebhooks package).",
          ),
          done,
        ),
      );
      await load();
    });
  });

  fill(view, h("h1", {}, "Webhooks"), out, list, form);
  load();
}

function renderDeliveries(view, context) {
  const id = encodeURIComponent(context.id);
  const params = context.params;
  const status = params.get("status") ?? "";
  const cursor = params.get("cursor") ?? "";
  const out = h("div", { "aria-live": "polite" });
  const head = h("div");
  const list = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  const pages = h("p", { class: "toolbar" });
  const go = (next) => {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(next)) if (value) search.set(name, value);
    location.hash = `#/webhooks/${id}${search.size ? `?${search}` : ""}`;
  };

  async function load() {
    try {
      const [{ data: endpoint }, page] = await Promise.all([
        api("GET", `/v1/webhooks/${id}`),
        api("GET", `/v1/webhooks/${id}/deliveries`, {
          query: { "filter[status]": status, cursor, limit: 20 },
        }),
      ]);
      const test = h("button", { type: "button", class: "secondary" }, "Send test");
      test.addEventListener("click", () =>
        withButton(test, out, async () => {
          const { data } = await api("POST", `/v1/webhooks/${id}/test`);
          fill(out, outcome(data));
        }),
      );
      fill(
        head,
        details([
          ["URL", h("span", { class: "break" }, endpoint.url)],
          [
            "State",
            [
              badge(endpoint.enabled ? "enabled" : "disabled"),
              endpoint.disabled_reason ? ` ${endpoint.disabled_reason}` : "",
            ],
          ],
          ["Events", endpoint.events ? endpoint.events.join(", ") : "all"],
        ]),
        h("p", { class: "toolbar" }, test),
      );
      fill(
        list,
        page.data.length === 0 ? h("p", { class: "muted" }, "No deliveries.") : page.data.map(delivery),
      );
      fill(
        pages,
        pager(page.meta, (cursor) => go({ status, cursor })),
      );
    } catch (error) {
      fill(list, problemBox(error));
    }
  }

  function delivery(item) {
    const retry = h("button", { type: "button", class: "secondary" }, "Retry now");
    const retryOut = h("div", { "aria-live": "polite" });
    retry.addEventListener("click", () =>
      withButton(retry, retryOut, async () => {
        const { data } = await api(
          "POST",
          `/v1/webhooks/${id}/deliveries/${encodeURIComponent(item.event_id)}/retry`,
        );
        await load();
        const attempt = data.attempts.reduce((last, one) => (one.attempt > last.attempt ? one : last));
        fill(out, h("h2", {}, `Retry of ${item.event_type}`), outcome(attempt));
      }),
    );
    return h(
      "section",
      { class: "panel delivery" },
      h("h2", { class: "small-heading" }, item.event_type, " ", badge(item.status)),
      details([
        ["Event", h("span", { class: "mono" }, item.event_id)],
        ["Next attempt", item.next_attempt_at ? timeElement(item.next_attempt_at) : null],
      ]),
      item.attempts.length === 0
        ? h("p", { class: "muted" }, "No attempts yet.")
        : table(
            ["#", "At", "Status", "Duration", "Answer or error"],
            item.attempts.map((attempt) => [
              String(attempt.attempt),
              timeElement(attempt.attempted_at),
              attempt.status_code == null ? "—" : String(attempt.status_code),
              `${attempt.duration_ms} ms`,
              attempt.error ?? attempt.response_excerpt ?? "",
            ]),
            "Attempts",
          ),
      h("p", {}, retry),
      retryOut,
    );
  }

  const filter = select(
    { id: "delivery-status" },
    [
      ["", "Any"],
      ["pending", "pending"],
      ["succeeded", "succeeded"],
      ["failed", "failed"],
    ],
    status,
  );
  filter.addEventListener("change", () => go({ status: filter.value }));
  const refresh = h("button", { type: "button", class: "secondary" }, "Refresh");
  refresh.addEventListener("click", () => withButton(refresh, out, load));

  fill(
    view,
    h("p", {}, h("a", { href: "#/webhooks" }, "← Webhooks")),
    h("h1", {}, "Deliveries"),
    head,
    out,
    h("div", { class: "toolbar" }, field("Status", filter), refresh),
    list,
    pages,
  );
  load();
}
