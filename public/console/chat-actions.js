// Delete for everyone and edit, on the page of a message the session sent (docs/messages.md, Chat actions):
// `DELETE /v1/chatapp/messages/{id}` and `PATCH /v1/chatapp/messages/{id}` `{content}`. The
// buttons show only for a message they can act on; the API decides the rest (the time windows,
// the gateway), and its problem is shown beside them.

import { api, withButton } from "./api.js";
import { fill, h } from "./dom.js";

/**
 * Statuses of a message that is on the network (docs/messages.md, Chat actions: "queued, scheduled, failed"
 * are not).
 */
const ON_NETWORK = new Set(["sent", "delivered", "read"]);

/** Whether a message's page offers "Delete for everyone": a message the session sent, not deleted. */
export function canDelete(message) {
  return message.direction === "outgoing" && ON_NETWORK.has(message.status) && !message.metadata?.deleted_at;
}

/** Whether a message's page offers "Edit": a text the session sent, not deleted. */
export function canEdit(message) {
  return canDelete(message) && message.type === "text";
}

/**
 * The chat actions of message `id`'s page: a "Delete for everyone" button (confirmed first), and
 * "Edit" with a text box prefilled with the message's text. `shown(message)` is called with the
 * message as each action answers it; `update(message)` shows or hides the controls for it.
 * @returns {{element: HTMLElement, update: (message: object) => void}}
 */
export function chatActions(id, shown) {
  const path = `/v1/chatapp/messages/${encodeURIComponent(id)}`;
  const out = h("div", { id: "chat-action-result", "aria-live": "polite" });
  const deleteButton = h(
    "button",
    { type: "button", id: "delete-message", class: "danger" },
    "Delete for everyone",
  );
  const text = h("textarea", { id: "edit-content", rows: 3, maxlength: 4096, "aria-label": "New text" });
  const save = h("button", { type: "submit", id: "edit-save" }, "Save edit");
  const form = h("form", { id: "edit-form", hidden: true }, text, h("p", { class: "toolbar" }, save));
  const editButton = h("button", { type: "button", id: "edit-message" }, "Edit");
  const toolbar = h("p", { class: "toolbar", hidden: true }, editButton, deleteButton);
  let current = null;

  const done = (words, message) => {
    fill(out, h("p", { class: "success", role: "status" }, words));
    form.hidden = true;
    shown(message);
  };
  deleteButton.addEventListener("click", () => {
    if (!confirm("Delete this message for everyone? The contact sees “This message was deleted”.")) return;
    withButton(deleteButton, out, async () => {
      const { data } = await api("DELETE", path);
      done("Deleted for everyone.", data);
    });
  });
  editButton.addEventListener("click", () => {
    form.hidden = !form.hidden;
    if (!form.hidden) {
      text.value = current?.content ?? "";
      text.focus();
    }
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    withButton(save, out, async () => {
      const { data } = await api("PATCH", path, { body: { content: text.value } });
      done("Edited.", data);
    });
  });

  return {
    element: h("div", {}, toolbar, form, out),
    update(message) {
      current = message;
      toolbar.hidden = !canDelete(message);
      editButton.hidden = !canEdit(message);
      if (!canEdit(message)) form.hidden = true;
    },
  };
}
