import type { MessageType } from "./types";

/** Shortest "typing…" shown before a message (ms). */
export const TYPING_MIN_MS = 1_000;
/** Longest "typing…" shown before a message (ms). */
export const TYPING_MAX_MS = 8_000;
/** Characters a person types per second, as the typing time counts them. */
export const TYPED_CHARS_PER_SECOND = 30;

/**
 * How long the recipient sees "typing…" before a `simulate_typing` message (docs/messages.md,
 * Typing before a send): one second per {@link TYPED_CHARS_PER_SECOND} characters of its text (a media
 * message's caption), rounded to whole seconds, at least {@link TYPING_MIN_MS} and at most
 * {@link TYPING_MAX_MS}. Characters are Unicode code points. A media message without a caption
 * and a template (its text is Meta's, not ours to count) take the minimum.
 * @returns milliseconds, a whole number of seconds from 1,000 to 8,000.
 */
export function typingMs(type: MessageType, content: string | null): number {
  const text = type === "template" ? "" : (content ?? "");
  const seconds = Math.round([...text].length / TYPED_CHARS_PER_SECOND);
  return Math.min(TYPING_MAX_MS, Math.max(TYPING_MIN_MS, seconds * 1000));
}
