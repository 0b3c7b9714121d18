// Sessions: the list, create, the live QR view (a link token opens the session's /live WebSocket,
// since a browser cannot set headers on one), disconnect, reconnect, delete, the hosted link URL,
// and a WhatsApp Cloud API session's message templates. A session's own page (#/sessions/<id>)
// shows its health (session-health.js) and checks whether numbers are on the network.

import { api, problemBox, withButton } from "./api.js";
import { badge, fill, h, table, timeElement } from "./dom.js";
import { gatewayLabel } from "./gateways.js";
import { renderSession } from "./session-page.js";

/** `POST …/link-url`: a hosted link URL `{url, expires_at}` whose path ends in `/link/{token}`. */
function linkUrl(id) {
  return api("POST", `/v1/chatapp/sessions/${encodeURIComponent(id)}/link-url`);
}

/** Only the API's own QR images: a PNG data URI (CSP also allows only `data:` and self). */
function isQrImage(value) {
  return typeof value === "string" && value.startsWith("data:image/png;base64,");
}

/** The text of a template's BODY component (Meta's `components[].text`), or null. */
function bodyText(template) {
  const body = (template.components ?? []).find((component) => component.type === "BODY");
  return typeof body?.text === "string" ? body.text : null;
}

/** How often the list is read again while the page is open, so statuses stay live (ms). */
const LIST_REFRESH_MS = 5_000;

/**
 * Draws the sessions page into `view`, or with `context.id` that session's page (session-page.js).
 * @returns {() => void} stops the page's refresh and closes its live socket, if one is open
 */
export function render(view, context) {
  return context.id ? renderSession(view, context.id) : renderList(view, context);
}

/**
 * Draws the sessions list into `view`; the list is read again every {@link LIST_REFRESH_MS} and
 * redrawn only when a session's status, reason or phone changed (so a button under the pointer
 * stays put).
 * @returns {() => void} stops the refresh and closes the live socket, if one is open
 */
function renderList(view, context) {
  const out = h("div", { "aria-live": "polite" });
  const live = h("div");
  const list = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  let socket = null;
  let pinger = null;
  let shown = null;

  function closeLive() {
    if (pinger) clearInterval(pinger);
    pinger = null;
    if (socket) socket.close(1000, "closed by the console");
    socket = null;
  }

  async function load() {
    try {
      const { sessions } = await api("GET", "/v1/chatapp/sessions");
      const state = JSON.stringify(
        sessions.map((s) => [s.id, s.status, s.reason, s.phone_number, s.display_name]),
      );
      if (state === shown) return;
      shown = state;
      fill(list, sessionTable(sessions));
    } catch (error) {
      shown = null;
      fill(list, problemBox(error));
    }
  }

  function sessionTable(sessions) {
    if (sessions.length === 0)
      return h("p", { class: "muted" }, "No sessions yet. Create one to link a phone.");
    return table(
      ["Status", "Phone", "Gateway", "Session", "Created", "Actions"],
      sessions.map((session) => [
        [
          badge(session.status),
          session.reason ? h("span", { class: "muted small" }, ` ${session.reason}`) : null,
        ],
        session.phone_number ?? h("span", { class: "muted" }, "—"),
        h("span", { class: "gateway", "data-gateway": session.gateway }, gatewayLabel(session.gateway)),
        h(
          "a",
          {
            class: "mono small",
            href: `#/sessions/${encodeURIComponent(session.id)}`,
            title: "Health and number check",
          },
          session.id,
        ),
        timeElement(session.created_at),
        h("div", { class: "actions" }, actions(session)),
      ]),
      "Sessions",
    );
  }

  function actions(session) {
    const id = encodeURIComponent(session.id);
    const buttons = [];
    const command = (label, cls, run) => {
      const button = h("button", { type: "button", class: cls, "data-session": session.id }, label);
      button.addEventListener("click", () => withButton(button, out, run));
      return button;
    };
    if (session.status === "pending")
      buttons.push(command("Show QR", "secondary", () => openLive(session.id, null)));
    if (session.status === "connected")
      buttons.push(
        command("Disconnect", "secondary", async () => {
          await api("PATCH", `/v1/chatapp/sessions/${id}/disconnect`);
          await load();
        }),
      );
    if (session.status === "disconnected" || session.status === "failed")
      buttons.push(
        command("Reconnect", "secondary", async () => {
          const result = await api("PATCH", `/v1/chatapp/sessions/${id}/reconnect`);
          if (result.session.status === "pending") openLive(session.id, result.qr_code);
          await load();
        }),
      );
    if (session.gateway === "cloud_api")
      buttons.push(command("Templates", "secondary", () => showTemplates(session)));
    else
      buttons.push(
        command("Copy hosted link URL", "secondary", async () => {
          const { url, expires_at } = await linkUrl(session.id);
          let copied = false;
          try {
            await navigator.clipboard.writeText(url);
            copied = true;
          } catch {
            // No clipboard permission (or not a secure context): the URL is shown to copy by hand.
          }
          const input = h("input", {
            type: "text",
            readonly: true,
            class: "wide",
            id: "hosted-link-url",
            value: url,
          });
          fill(
            out,
            h(
              "div",
              { class: "panel" },
              h("label", { for: "hosted-link-url" }, copied ? "Hosted link URL (copied)" : "Hosted link URL"),
              input,
              h(
                "p",
                { class: "muted small" },
                "Valid until ",
                timeElement(expires_at),
                ". Anyone with it can link this session.",
              ),
            ),
          );
          input.select();
        }),
      );
    buttons.push(
      command("Delete", "danger", async () => {
        if (!confirm(`Delete session ${session.id}? Its queued messages fail and are refunded.`)) return;
        await api("DELETE", `/v1/chatapp/sessions/${id}`);
        if (socket && live.dataset.session === session.id) closeLive();
        await load();
      }),
    );
    return buttons;
  }

  /**
   * A Cloud API session's message templates (`GET …/templates`): name, language, category and
   * Meta's review status, with the body text; read again from Meta with "Refresh from Meta".
   */
  async function showTemplates(session, refresh = false) {
    const query = refresh ? "?refresh=true" : "";
    const { data: templates } = await api(
      "GET",
      `/v1/chatapp/sessions/${encodeURIComponent(session.id)}/templates${query}`,
    );
    const again = h("button", { type: "button", class: "secondary" }, "Refresh from Meta");
    again.addEventListener("click", () => withButton(again, out, () => showTemplates(session, true)));
    const rows = templates.map((template) => [
      h("span", { class: "mono" }, template.name),
      template.language,
      template.category,
      badge(template.status.toLowerCase()),
      bodyText(template) ?? h("span", { class: "muted" }, "—"),
    ]);
    fill(
      out,
      h(
        "section",
        { class: "panel", id: "templates", "aria-labelledby": "templates-title" },
        h("h2", { id: "templates-title" }, `Templates of ${session.display_name || session.phone_number}`),
        templates.length === 0
          ? h("p", { class: "muted" }, "No templates yet: create them in WhatsApp Manager or with the API.")
          : table(["Name", "Language", "Category", "Status", "Body"], rows, "Message templates"),
        again,
      ),
    );
  }

  /** The live view of one session: its QR (replaced on rotation) until it is connected. */
  async function openLive(id, qrCode) {
    closeLive();
    live.dataset.session = id;
    const status = h("p", { id: "live-status", class: "live-status" }, "Connecting…");
    const image = h("img", { id: "live-qr", alt: "QR code to scan with the phone", width: 264, height: 264 });
    image.hidden = true;
    const expiry = h("p", { class: "muted small" });
    const close = h("button", { type: "button", class: "secondary" }, "Close");
    close.addEventListener("click", () => {
      closeLive();
      live.replaceChildren();
    });
    const showQr = (value, expiresAt) => {
      if (!isQrImage(value)) return;
      image.src = value;
      image.hidden = false;
      fill(expiry, expiresAt ? ["The code changes at ", timeElement(expiresAt), "."] : "");
    };
    fill(
      live,
      h(
        "section",
        { class: "panel", "aria-labelledby": "live-title" },
        h("h2", { id: "live-title" }, "Link a phone"),
        h("p", {}, "On the phone: Settings → Linked devices → Link a device, and scan this code."),
        h("p", { class: "mono small", id: "live-session-id" }, id),
        status,
        image,
        expiry,
        close,
      ),
    );
    showQr(qrCode, null);
    const { url } = await linkUrl(id);
    const token = url.slice(url.lastIndexOf("/link/") + "/link/".length);
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(
      `${scheme}://${location.host}/v1/chatapp/sessions/${encodeURIComponent(id)}/live?token=${encodeURIComponent(token)}`,
    );
    socket = ws;
    pinger = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send("ping"), 30_000);
    ws.addEventListener("message", (event) => {
      if (event.data === "pong") return;
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      if (frame.type === "session.deleted") {
        fill(status, "The session was deleted.");
        image.hidden = true;
        load();
        return;
      }
      const session = frame.session;
      if (!session) return;
      status.dataset.status = session.status;
      if (session.status === "connected") {
        fill(status, badge("connected"), " with ", h("strong", {}, session.phone_number ?? "the phone"));
        image.hidden = true;
        image.removeAttribute("src");
        expiry.replaceChildren();
      } else if (session.status === "pending") {
        fill(status, badge("pending"), " Waiting for the scan…");
        showQr(frame.qr_code, frame.expires_at);
      } else {
        fill(status, badge(session.status), session.reason ? ` ${session.reason}` : "");
        image.hidden = true;
      }
      if (frame.type === "session.status_changed") {
        load();
        context.refreshAccount();
      }
    });
    ws.addEventListener("close", (event) => {
      if (socket === ws && event.code !== 1000) {
        status.append(
          h("span", { class: "muted small" }, ` (live updates stopped: ${event.reason || event.code})`),
        );
      }
    });
  }

  const create = h("button", { type: "button", id: "create-session" }, "Create session");
  create.addEventListener("click", () =>
    withButton(create, out, async () => {
      const created = await api("POST", "/v1/chatapp/sessions");
      await load();
      await openLive(created.session.id, created.qr_code);
    }),
  );
  const refresh = h("button", { type: "button", class: "secondary" }, "Refresh");
  refresh.addEventListener("click", () => withButton(refresh, out, load));

  fill(view, h("h1", {}, "Sessions"), h("p", { class: "toolbar" }, create, refresh), out, live, list);
  load();
  const refresher = setInterval(load, LIST_REFRESH_MS);
  return () => {
    clearInterval(refresher);
    closeLive();
  };
}
