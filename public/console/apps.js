// Apps and one-time codes: list (page-numbered, as the API pages apps), create and edit an app,
// send a code to a number and verify it, watching the messages it went out in (its attempts,
// failover included) while it is pending.

import { api, problemBox, withButton } from "./api.js";
import { badge, details, field, fill, h, select, table, timeElement, truncate } from "./dom.js";

/** How often a pending OTP is read again, so that its attempts (a failover, acks) show as they come. */
const POLL_MS = 2000;

/**
 * The app form's fields; `app` fills them for an edit. `prefix` keeps ids unique on the page.
 * @returns {HTMLElement[]}
 */
function appFields(prefix, sessions, app) {
  const sessionOptions = [
    ["", "None"],
    ...sessions.map((s) => [s.id, `${s.phone_number ?? s.id.slice(0, 8)} (${s.status})`]),
  ];
  return [
    h(
      "div",
      { class: "grid" },
      field(
        "Name",
        h("input", {
          id: `${prefix}-name`,
          name: "name",
          required: true,
          maxlength: 100,
          value: app?.name ?? "",
        }),
      ),
      field(
        "Sender id",
        h("input", {
          id: `${prefix}-sender`,
          name: "sender_id",
          required: true,
          value: app?.sender_id ?? crypto.randomUUID(),
        }),
        "A uuid of your choice that names the sender.",
      ),
      field(
        "Session",
        select(
          { id: `${prefix}-session`, name: "chatapp_session_id" },
          sessionOptions,
          app?.chatapp_session_id ?? "",
        ),
      ),
      field(
        "Code size",
        h("input", {
          id: `${prefix}-code-size`,
          name: "code_size",
          type: "number",
          min: 4,
          max: 10,
          value: app?.code_size ?? "",
          placeholder: "6",
        }),
      ),
      field(
        "Expiry (seconds)",
        h("input", {
          id: `${prefix}-expiry`,
          name: "expiry_seconds",
          type: "number",
          min: 60,
          max: 3600,
          value: app?.expiry_seconds ?? "",
          placeholder: "600",
        }),
      ),
    ),
    field(
      "Message template",
      h(
        "textarea",
        { id: `${prefix}-template`, name: "message_template", rows: 2, maxlength: 1000 },
        app?.message_template ?? "",
      ),
      "Use {{code}} and optionally {{app_name}}. Leave empty for the default.",
    ),
  ];
}

/**
 * The form's values as an API body: empty fields left out (or, for an edit, a cleared session as
 * null). An edit sends the session only when it changed: the API takes `chatapp_session_id` alone
 * as a one-channel list, which would drop the app's other channels.
 */
function appBody(form, editing) {
  const data = new FormData(form);
  const body = {};
  for (const name of ["name", "sender_id", "message_template"]) {
    const value = String(data.get(name) ?? "").trim();
    if (value) body[name] = value;
  }
  for (const name of ["code_size", "expiry_seconds"]) {
    const value = String(data.get(name) ?? "").trim();
    if (value) body[name] = Number(value);
  }
  const session = String(data.get("chatapp_session_id") ?? "");
  if (editing && session === (editing.chatapp_session_id ?? "")) return body;
  if (session) body.chatapp_session_id = session;
  else if (editing) body.chatapp_session_id = null;
  return body;
}

/** The first 8 characters of an id: enough to tell apart the apps of one account at a glance. */
function shortId(id) {
  return id.slice(0, 8);
}

/** An app as the code form's App list names it: its name and short id, since names may repeat. */
function appLabel(app) {
  return `${app.name} (${shortId(app.id)})`;
}

/** Draws the apps page. */
export function render(view, context) {
  const page = Number(context.params.get("page") ?? "1") || 1;
  const out = h("div", { "aria-live": "polite" });
  const list = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  const editor = h("div");
  const otpArea = h("div");
  let sessions = [];
  let apps = [];

  async function load() {
    try {
      const [result, sessionList] = await Promise.all([
        api("GET", "/v1/apps", { query: { page } }),
        api("GET", "/v1/chatapp/sessions"),
      ]);
      apps = result.data;
      sessions = sessionList.sessions;
      fill(list, appTable(result), pagerLinks(result.meta));
      fill(otpArea, otpPanel());
      if (!createForm.dataset.ready) {
        createForm.dataset.ready = "1";
        createForm.prepend(...appFields("create", sessions, null));
      }
    } catch (error) {
      fill(list, problemBox(error));
    }
  }

  function pagerLinks(meta) {
    if (meta.last_page <= 1) return null;
    return h(
      "p",
      { class: "toolbar" },
      page > 1 ? h("a", { href: `#/apps?page=${page - 1}` }, "← Previous") : null,
      h("span", { class: "muted" }, `Page ${meta.current_page} of ${meta.last_page}`),
      page < meta.last_page ? h("a", { href: `#/apps?page=${page + 1}` }, "Next →") : null,
    );
  }

  function appTable(result) {
    if (result.data.length === 0) return h("p", { class: "muted" }, "No apps yet.");
    return table(
      ["Name", "Template", "Code size", "Session", "Expiry", ""],
      result.data.map((app) => {
        const edit = h("button", { type: "button", class: "secondary" }, "Edit");
        edit.addEventListener("click", () => openEditor(app));
        return [
          [app.name, h("div", { class: "mono small muted" }, shortId(app.id))],
          truncate(app.message_template, 50),
          String(app.code_size),
          app.chatapp_session_id
            ? [
                h("span", { class: "mono small" }, app.chatapp_session_id.slice(0, 8)),
                app.channels?.length > 1
                  ? h("span", { class: "muted small" }, ` +${app.channels.length - 1} for failover`)
                  : null,
              ]
            : h("span", { class: "muted" }, "none"),
          `${app.expiry_seconds} s`,
          edit,
        ];
      }),
      "Apps",
    );
  }

  function openEditor(app) {
    const editOut = h("div");
    const form = h(
      "form",
      { class: "panel", id: "edit-app-form", "aria-labelledby": "edit-app-title" },
      h("h2", { id: "edit-app-title" }, `Edit ${app.name}`),
      appFields("edit", sessions, app),
      h(
        "p",
        { class: "toolbar" },
        h("button", { type: "submit" }, "Save"),
        h(
          "button",
          { type: "button", class: "secondary", onclick: () => editor.replaceChildren() },
          "Cancel",
        ),
      ),
      editOut,
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      withButton(form.querySelector("button[type=submit]"), editOut, async () => {
        await api("PATCH", `/v1/apps/${encodeURIComponent(app.id)}`, { body: appBody(form, app) });
        editor.replaceChildren();
        fill(out, h("p", { class: "success", role: "status" }, "App saved."));
        await load();
      });
    });
    fill(editor, form);
    form.querySelector("input").focus();
  }

  function otpPanel() {
    if (apps.length === 0) return null;
    const sendOut = h("div", { "aria-live": "polite" });
    const state = h("div", { id: "otp-state" });
    const form = h(
      "form",
      { class: "panel", id: "otp-form", "aria-labelledby": "otp-title" },
      h("h2", { id: "otp-title" }, "Send a one-time code"),
      h(
        "div",
        { class: "grid" },
        field(
          "App",
          select(
            { id: "otp-app", name: "app" },
            apps.map((app) => [app.id, appLabel(app)]),
          ),
        ),
        field(
          "To",
          h("input", {
            id: "otp-to",
            name: "to_number",
            required: true,
            placeholder: "+14155550123",
            autocomplete: "off",
          }),
        ),
      ),
      h("p", {}, h("button", { type: "submit" }, "Send code")),
      sendOut,
      state,
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const data = new FormData(form);
      withButton(form.querySelector("button[type=submit]"), sendOut, async () => {
        const { data: otp } = await api(
          "POST",
          `/v1/apps/${encodeURIComponent(String(data.get("app")))}/otp`,
          {
            body: { to_number: String(data.get("to_number")).trim() },
          },
        );
        context.refreshAccount();
        fill(state, verifyPanel(otp));
      });
    });
    return form;
  }

  /** A session as the console names it: its number once linked, else the start of its id. */
  function sessionLabel(id) {
    const session = sessions.find((s) => s.id === id);
    return h("span", { class: "mono small", title: id }, session?.phone_number ?? id.slice(0, 8));
  }

  /** The messages an OTP's codes went out in, oldest first: channel, message, status, times. */
  function attemptTable(otp) {
    if (!otp.attempts?.length) return null;
    return h(
      "div",
      { id: "otp-attempts" },
      h("h3", {}, "Messages sent"),
      table(
        ["Channel", "Code", "Message", "Status", "Sent", "Delivered", "Read"],
        otp.attempts.map((attempt) => [
          sessionLabel(attempt.session_id),
          `#${attempt.send}`,
          attempt.message_id
            ? h("a", { href: `#/messages/${encodeURIComponent(attempt.message_id)}` }, "Message")
            : h("span", { class: "muted" }, "being sent"),
          [
            badge(attempt.status ?? "queued"),
            attempt.reason ? h("span", { class: "muted small" }, ` ${attempt.reason}`) : null,
            attempt.failed_at ? [" ", timeElement(attempt.failed_at)] : null,
          ],
          timeElement(attempt.sent_at),
          timeElement(attempt.delivered_at),
          timeElement(attempt.read_at),
        ]),
        "Attempts",
      ),
    );
  }

  function verifyPanel(initial) {
    const summary = h("div");
    const verifyOut = h("div", { "aria-live": "polite" });
    let timer = null;
    // While pending and not yet read, the OTP is read again: a failover adds an attempt, acks move them.
    const watch = (otp) => {
      if (timer) clearTimeout(timer);
      timer = null;
      const last = otp.attempts?.at(-1);
      if (otp.status !== "pending" || last?.status === "read") return;
      timer = setTimeout(async () => {
        if (!summary.isConnected) return;
        try {
          const { data } = await api("GET", `/v1/otp/${encodeURIComponent(initial.id)}`);
          if (!summary.isConnected) return;
          // A failover sent (and charged) another message.
          if (data.attempts.length > (otp.attempts?.length ?? 0)) context.refreshAccount();
          show(data);
        } catch {
          if (summary.isConnected) watch(otp);
        }
      }, POLL_MS);
    };
    const show = (otp) => {
      watch(otp);
      fill(
        summary,
        details([
          ["OTP", h("span", { class: "mono" }, otp.id)],
          ["Status", badge(otp.status)],
          ["To", otp.to_number],
          ["Expires", timeElement(otp.expires_at)],
          ["Attempts remaining", String(otp.attempts_remaining)],
          ["Sends remaining", String(otp.sends_remaining)],
          [
            "Message",
            otp.message_id
              ? h("a", { href: `#/messages/${encodeURIComponent(otp.message_id)}` }, "Show the message")
              : null,
          ],
        ]),
        attemptTable(otp),
      );
    };
    show(initial);
    const code = h("input", {
      id: "otp-code",
      name: "code",
      required: true,
      inputmode: "numeric",
      autocomplete: "one-time-code",
    });
    const verify = h("button", { type: "button", id: "otp-verify" }, "Verify");
    const resend = h("button", { type: "button", class: "secondary" }, "Resend");
    verify.addEventListener("click", () =>
      withButton(verify, verifyOut, async () => {
        const { data } = await api("POST", `/v1/otp/${encodeURIComponent(initial.id)}/verify`, {
          body: { code: code.value.trim() },
        });
        show(data);
        fill(verifyOut, h("p", { class: "success", role: "status" }, `Code ${data.status}.`));
      }),
    );
    resend.addEventListener("click", () =>
      withButton(resend, verifyOut, async () => {
        const { data } = await api("POST", `/v1/otp/${encodeURIComponent(initial.id)}/resend`);
        show(data);
        fill(
          verifyOut,
          h("p", { class: "success", role: "status" }, "A new code was sent; the old one no longer works."),
        );
      }),
    );
    return h(
      "div",
      {},
      summary,
      field("Code received", code),
      h("p", { class: "toolbar" }, verify, resend),
      verifyOut,
    );
  }

  const createOut = h("div", { "aria-live": "polite" });
  const createForm = h(
    "form",
    { class: "panel", id: "create-app-form" },
    h("p", {}, h("button", { type: "submit" }, "Create app")),
    createOut,
  );
  createForm.addEventListener("submit", (event) => {
    event.preventDefault();
    withButton(createForm.querySelector("button[type=submit]"), createOut, async () => {
      const { data: app } = await api("POST", "/v1/apps", { body: appBody(createForm, null) });
      createForm.reset();
      createForm.querySelector("[name=sender_id]").value = crypto.randomUUID();
      fill(createOut, h("p", { class: "success", role: "status" }, `App ${app.name} created.`));
      await load();
    });
  });

  fill(
    view,
    h("h1", {}, "Apps and one-time codes"),
    out,
    list,
    editor,
    otpArea,
    h("h2", {}, "Create an app"),
    createForm,
  );
  load();
}
