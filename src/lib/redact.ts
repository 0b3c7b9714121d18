/**
 * Longest reason a message keeps from a gateway's error (`metadata.last_error`,
 * `metadata.send_attempts[].reason`, a failed message's `reason`), in characters: enough for the
 * cause and the gateway's own words (`gateway_http_400: POST /api/sendText: …`), not for a copy of
 * what it echoed back.
 */
export const MAX_REASON_LENGTH = 200;

/** What stands where the message's own text was taken out of a reason. */
export const REDACTED = "[redacted]";

/**
 * Runs of at least this many digits of the message's text are taken out wherever they appear:
 * a one-time code has 4 to 10 digits (docs/otp.md, Reverse OTP), and a gateway may quote it alone.
 */
const MIN_CODE_DIGITS = 4;

/**
 * An echo of the message's text is found by its first characters (at most this many) and taken
 * out as far as it goes on matching: a whole copy, or one a gateway or our own cut of its body
 * (gateways/http.ts) stopped short.
 */
const ECHO_HEAD = 16;

/** Texts shorter than this are not searched for as a whole (`ok`, `hi`): they are not secrets, and too common to tell apart from the gateway's own words. */
const MIN_ECHO = 4;

/**
 * `reason`, a gateway's error as a send attempt reports it, made fit to store with the message
 * and show to its account: every copy of the message's own `content` is replaced by
 * {@link REDACTED}, as sent and as JSON escapes it (a gateway quoting the request body), whole or
 * cut short (also at the end of `reason`), and so is every run of 4 or more digits of `content`
 * (a one-time code, even quoted alone); then it is cut to {@link MAX_REASON_LENGTH} characters
 * (the last one `…`). So a code sent in a message never reaches its metadata, its events or its
 * webhooks through a gateway's error body. `content` null (media without caption) only cuts.
 */
export function redactReason(reason: string, content: string | null): string {
  let out = reason;
  if (content) {
    const forms = new Set([content, JSON.stringify(content).slice(1, -1)]);
    for (const form of forms) if (form.length >= MIN_ECHO) out = withoutEchoes(out, form);
    const codes = [...new Set(content.match(new RegExp(`\\d{${MIN_CODE_DIGITS},}`, "g")) ?? [])];
    // Longest first: a code that contains another is taken out whole.
    for (const code of codes.sort((a, b) => b.length - a.length)) out = out.replaceAll(code, REDACTED);
  }
  return out.length > MAX_REASON_LENGTH ? `${out.slice(0, MAX_REASON_LENGTH - 1)}…` : out;
}

/** `text` with each echo of `form` (see {@link ECHO_HEAD}) replaced, and a prefix of it at the very end. */
function withoutEchoes(text: string, form: string): string {
  const head = form.slice(0, ECHO_HEAD);
  let out = "";
  let from = 0;
  for (let at = text.indexOf(head); at !== -1; at = text.indexOf(head, from)) {
    let length = head.length;
    while (length < form.length && text[at + length] === form[length]) length += 1;
    out += text.slice(from, at) + REDACTED;
    from = at + length;
  }
  out += text.slice(from);
  // A copy cut short before its head was complete: the longest start of `form` that ends `out`.
  for (let length = Math.min(head.length - 1, out.length); length >= MIN_ECHO; length--) {
    if (out.endsWith(form.slice(0, length))) return out.slice(0, -length) + REDACTED;
  }
  return out;
}
