import { z } from "zod";

/*
 * Polls (docs/messages.md, Sending messages → Polls): a question with 2 to 12 options, single or multiple
 * choice, sent on linked devices (the Cloud API has no poll message). WhatsApp's own limits, as
 * the linked-device APIs that relay them publish them: Green-API's "SendPoll"
 * (https://greenapi.com/en/docs/api/sending/SendPoll/): the question at most 255 characters, 2 to
 * 12 options that differ from each other, each at most 100 characters; WhatsApp's app offers 12
 * options at most. WAHA's `MessagePoll` (its OpenAPI document, devlikeapro/waha-docs
 * static/swagger/openapi.json) states no limits; Evolution API's `pollMessageSchema`
 * (evolution-foundation/evolution-api src/validate/message.schema.ts) takes 2 to 10 `values`,
 * unique (lib/gateway-kinds.ts `maxPollOptions`). A contact's vote comes back as a gateway's
 * `poll_vote` event and is kept on the poll message (messages/poll-votes.ts).
 */

/** Longest question, in characters (Green-API's "SendPoll": "The maximum length … is 255 characters"). */
export const MAX_POLL_QUESTION = 255;
/** Fewest options of a poll. */
export const MIN_POLL_OPTIONS = 2;
/** Most options of a poll (Green-API's "SendPoll": "cannot be more than 12"). */
export const MAX_POLL_OPTIONS = 12;
/** Longest option, in characters (Green-API's "SendPoll", `optionName`: "The maximum text length is 100 characters"). */
export const MAX_POLL_OPTION = 100;

/** A text of 1 to `max` characters (as lib/interactive.ts counts them: UTF-16 units), not blank. */
const text = (max: number, meaning: string) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((value) => value.trim().length > 0, "must not be blank")
    .describe(meaning);

/**
 * A poll as a send takes it and `metadata.poll` keeps it: `question` (1–{@link MAX_POLL_QUESTION}
 * characters), `options` ({@link MIN_POLL_OPTIONS}–{@link MAX_POLL_OPTIONS} texts of
 * 1–{@link MAX_POLL_OPTION} characters, each once: a vote names its options by their text), and
 * `multiple_answers` (a contact may pick several options; default false, one).
 */
export const PollSchema = z
  .strictObject({
    question: text(MAX_POLL_QUESTION, "The question, 1 to 255 characters."),
    options: z
      .array(text(MAX_POLL_OPTION, "An option, 1 to 100 characters."))
      .min(MIN_POLL_OPTIONS)
      .max(MAX_POLL_OPTIONS)
      .describe("The options, 2 to 12, each once, in the order shown."),
    multiple_answers: z
      .boolean()
      .default(false)
      .describe("Whether a contact may pick several options (default false: one)."),
  })
  .superRefine((poll, ctx) => {
    poll.options.forEach((option, index) => {
      if (poll.options.indexOf(option) !== index)
        ctx.addIssue({ code: "custom", path: ["options", index], message: "must be unique" });
    });
  });

/** A poll: see {@link PollSchema}. */
export type Poll = z.output<typeof PollSchema>;

/**
 * A contact's vote as `metadata.poll_votes` keeps it, under the voter: the options they picked
 * (in the poll's order) and when, by the gateway's clock (an API timestamp, UTC).
 */
export const PollVoteSchema = z.object({
  options: z.array(z.string()).describe("The options the contact picked, in the poll's order."),
  at: z.string().describe("When they voted, by the gateway's clock (an API timestamp, UTC)."),
});

/** A vote: see {@link PollVoteSchema}. */
export type PollVote = z.infer<typeof PollVoteSchema>;

/**
 * The poll an outgoing `poll` message carries to its gateway: its queue message's content, the
 * JSON of the row's `metadata.poll` (messages/dispatch-request.ts).
 * @throws Error when `content` is not such JSON (a message built by another path).
 */
export function pollOf(content: string | null): Poll {
  return PollSchema.parse(JSON.parse(content ?? "null"));
}

/** As {@link pollOf}, but null for content that is not a poll's JSON, instead of throwing. */
export function readPoll(content: string | null): Poll | null {
  try {
    return pollOf(content);
  } catch {
    return null;
  }
}

/** The text a `poll` message stores as its `content`, shown in lists and searched as any text: its question. */
export function pollLabel(poll: Poll): string {
  return poll.question;
}

/**
 * `selected` as a vote on `poll` keeps it: the poll's options among `selected`, each once, in the
 * poll's order (a vote names options by their text; one the poll does not have is left out).
 */
export function votedOptions(poll: Pick<Poll, "options">, selected: readonly string[]): string[] {
  return poll.options.filter((option) => selected.includes(option));
}

/**
 * How many contacts picked each option of `poll`, given every contact's vote: `{ [option]: count }`
 * in the poll's order, 0 for an option nobody picked (the shape of `metadata.poll_counts`).
 */
export function pollCounts(
  poll: Pick<Poll, "options">,
  votes: Readonly<Record<string, Pick<PollVote, "options">>>,
): Record<string, number> {
  const counts = Object.fromEntries(poll.options.map((option) => [option, 0]));
  for (const vote of Object.values(votes))
    for (const option of vote.options)
      if (Object.hasOwn(counts, option)) counts[option] = (counts[option] ?? 0) + 1;
  return counts;
}
