// A `contacts` message in the console: each card of its `metadata.contacts` (docs/messages.md,
// Sending messages → Contact cards) with its name, workplace, phones, emails and web addresses. A phone
// with a WhatsApp id links to a chat with it (wa.me); emails and http(s) addresses are links.
// Every value reaches the page through h(), as text or an attribute.

import { h } from "./dom.js";

/** The cards a message carries: `metadata.contacts` of a `contacts` message, else none. */
function cardsOf(message) {
  const cards = message.type === "contacts" ? message.metadata?.contacts : null;
  return Array.isArray(cards) ? cards.filter((card) => typeof card?.name?.formatted_name === "string") : [];
}

/** An http(s) link to `url`, opened in a new tab; plain text for anything else. */
function webLink(url) {
  let parsed = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  return parsed && (parsed.protocol === "https:" || parsed.protocol === "http:")
    ? h("a", { href: parsed.href, target: "_blank", rel: "noopener noreferrer" }, url)
    : h("span", { class: "break" }, String(url));
}

/** " (type)" after an entry that names its kind, else "". */
function kind(entry) {
  return typeof entry?.type === "string" && entry.type ? ` (${entry.type})` : "";
}

/** One card: its name as a heading, then a line per workplace, phone, email and address. */
function cardElement(card, index) {
  const org = card.org ?? {};
  const work = [org.title, org.department, org.company].filter((part) => typeof part === "string" && part);
  const items = [
    work.length ? h("li", { class: "card-org" }, work.join(", ")) : null,
    ...(card.phones ?? []).map((phone) =>
      h(
        "li",
        { class: "card-phone" },
        /^\d+$/.test(phone.wa_id ?? "")
          ? h(
              "a",
              { href: `https://wa.me/${phone.wa_id}`, target: "_blank", rel: "noopener noreferrer" },
              phone.phone,
            )
          : phone.phone,
        kind(phone),
      ),
    ),
    ...(card.emails ?? []).map((email) =>
      h("li", { class: "card-email" }, h("a", { href: `mailto:${email.email}` }, email.email), kind(email)),
    ),
    ...(card.urls ?? []).map((url) => h("li", { class: "card-url" }, webLink(url.url), kind(url))),
  ].filter(Boolean);
  return h(
    "article",
    { class: "contact-card", id: `contact-card-${index}` },
    h("h3", {}, card.name.formatted_name),
    h("ul", {}, ...items),
  );
}

/** The "Contact cards" section of a message's page, or null for a message that carries none. */
export function contactCardsSection(message) {
  const cards = cardsOf(message);
  if (cards.length === 0) return null;
  return h(
    "section",
    { "aria-labelledby": "contact-cards-title", id: "message-contacts" },
    h("h2", { id: "contact-cards-title" }, cards.length === 1 ? "Contact card" : "Contact cards"),
    ...cards.map(cardElement),
  );
}
