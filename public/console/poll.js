// A `poll` message in the console: its question, each option with how many contacts now pick it
// (`metadata.poll_counts`), and how many contacts voted (`metadata.poll_votes`; docs/messages.md,
// Sending messages → Polls). Every value reaches the page through h(), as text.

import { details, h } from "./dom.js";

/** The poll a message carries: `metadata.poll` of a `poll` message with its options; else null. */
function pollOf(message) {
  const poll = message.type === "poll" ? message.metadata?.poll : null;
  return poll && typeof poll.question === "string" && Array.isArray(poll.options) ? poll : null;
}

/** The "Poll" section of a message's page, or null for a message that carries no poll. */
export function pollSection(message) {
  const poll = pollOf(message);
  if (!poll) return null;
  const counts = message.metadata?.poll_counts ?? {};
  const voters = Object.keys(message.metadata?.poll_votes ?? {}).length;
  return h(
    "section",
    { "aria-labelledby": "poll-title", id: "message-poll" },
    h("h2", { id: "poll-title" }, "Poll"),
    details([
      ["Question", h("span", { id: "poll-question" }, poll.question)],
      ["Answers", poll.multiple_answers ? "several per contact" : "one per contact"],
      ["Voters", h("span", { id: "poll-voters" }, String(voters))],
    ]),
    h(
      "ol",
      { id: "poll-options" },
      ...poll.options.map((option) => {
        const count = Number.isInteger(counts[option]) ? counts[option] : 0;
        return h(
          "li",
          { class: "poll-option" },
          h("span", { class: "poll-text" }, option),
          " ",
          h("span", { class: "poll-count badge" }, `${count} vote${count === 1 ? "" : "s"}`),
        );
      }),
    ),
  );
}
