/*
 * The two steps of reading one large base64 string out of a JSON object as it streams in, without
 * holding the object or the string whole (src/media/incoming.ts reads Evolution API's media
 * answers so): find where that member's string starts, then decode its text piece by piece.
 */

/** Where the string value of a top-level member starts, and the members written before it. */
export interface StringMemberStart {
  /** The object's members before this one, as `JSON.parse` reads them. */
  before: Record<string, unknown>;
  /** Index in the text just past the value's opening quote. */
  valueStart: number;
}

/**
 * Finds top-level member `name` of the JSON object (RFC 8259 §4) that `text` begins, and where
 * its string value starts. Only the text up to that member is read; what comes before it is
 * parsed with `JSON.parse` (so it must be well-formed), what comes after is left alone.
 *
 * @returns the {@link StringMemberStart}; `null` when `text` ends before the value's opening
 *   quote (read more and ask again with the longer text); `"absent"` when the object ends
 *   without the member, or its value is not a string.
 * @throws SyntaxError when `text` does not begin a JSON object.
 */
export function findStringMember(text: string, name: string): StringMemberStart | "absent" | null {
  let depth = 0;
  // At depth 1, whether the next string is a member's name (after `{` or `,`) or a value.
  let nameNext = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      if (depth === 0) throw new SyntaxError("The JSON text is not an object.");
      const end = stringEnd(text, i);
      if (end === -1) return null;
      if (depth === 1 && nameNext) {
        nameNext = false;
        if (JSON.parse(text.slice(i, end + 1)) === name) return valueAfter(text, i, end + 1);
      }
      i = end;
    } else if (char === "{" || char === "[") {
      if (depth === 0 && char === "[") throw new SyntaxError("The JSON text is not an object.");
      depth++;
      nameNext = depth === 1;
    } else if (char === "}" || char === "]") {
      depth--;
      if (depth === 0) {
        JSON.parse(text.slice(0, i + 1));
        return "absent";
      }
    } else if (char === "," && depth === 1) {
      nameNext = true;
    } else if (depth === 0 && !isJsonSpace(char)) {
      throw new SyntaxError("The JSON text is not an object.");
    }
  }
  return null;
}

/** The value of the member whose name spans `nameStart` to `nameEnd` (exclusive): see {@link findStringMember}. */
function valueAfter(text: string, nameStart: number, nameEnd: number): StringMemberStart | "absent" | null {
  const colon = /[ \t\n\r]*:[ \t\n\r]*/y;
  colon.lastIndex = nameEnd;
  if (!colon.test(text)) {
    if (/^[ \t\n\r]*$/.test(text.slice(nameEnd))) return null;
    throw new SyntaxError("A member's name is not followed by a colon.");
  }
  if (colon.lastIndex === text.length) return null;
  if (text[colon.lastIndex] !== '"') return "absent";
  // The members before: the text up to this member's name, its trailing comma swapped for `}`.
  const before: unknown = JSON.parse(`${text.slice(0, nameStart).replace(/,[ \t\n\r]*$/, "")}}`);
  return { before: before as Record<string, unknown>, valueStart: colon.lastIndex + 1 };
}

/** The index of the quote that closes the JSON string opening at `open`, or -1 if `text` ends first. */
function stringEnd(text: string, open: number): number {
  for (let quote = text.indexOf('"', open + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text[quote - 1 - backslashes] === "\\") backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}

function isJsonSpace(char: string | undefined): boolean {
  return char === " " || char === "\t" || char === "\n" || char === "\r";
}

const BASE64_GROUPS = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes the raw text of a JSON string of standard base64 (RFC 4648 §4, the alphabet with `+`
 * and `/`, `=` padding only at its end) as it arrives, in pieces cut anywhere: each call decodes
 * the whole 4-character groups it has (3 bytes each) and keeps the rest, at most 3 characters,
 * for the next. The JSON escape `\/` (RFC 8259 §7) is read as `/`; no other escape, space or
 * character outside the alphabet is base64.
 */
export class Base64TextDecoder {
  private carry = "";
  private padded = false;

  /**
   * Decodes the next piece of the string's text (never its closing quote).
   * @returns the bytes of the whole groups so far (possibly none).
   * @throws SyntaxError when the text is not base64.
   */
  push(piece: string): Uint8Array {
    let text = this.carry + piece;
    // A `\` at the end may be the first half of a `\/` cut between two pieces.
    const held = text.endsWith("\\") ? "\\" : "";
    if (held) text = text.slice(0, -1);
    if (text.includes("\\")) text = text.replaceAll("\\/", "/");
    const whole = text.length - (text.length % 4);
    this.carry = text.slice(whole) + held;
    return this.decode(text.slice(0, whole));
  }

  /**
   * Ends the string: decodes what is kept (a last group written without its padding is taken).
   * @throws SyntaxError when what is kept is not base64 (a single character, a lone `\`).
   */
  end(): Uint8Array {
    const rest = this.carry;
    this.carry = "";
    if (rest.length % 4 === 1 || rest.includes("\\"))
      throw new SyntaxError("The base64 text ends inside a group.");
    return this.decode(rest);
  }

  private decode(groups: string): Uint8Array {
    if (groups === "") return new Uint8Array(0);
    if (this.padded || !BASE64_GROUPS.test(groups)) throw new SyntaxError("The text is not base64.");
    this.padded = groups.endsWith("=");
    let binary: string;
    try {
      binary = atob(groups);
    } catch {
      throw new SyntaxError("The text is not base64.");
    }
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }
}
