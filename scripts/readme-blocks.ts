// The shell blocks of a markdown file and the output each should print, for `npm run check:readme`
// (scripts/check-readme.ts, whose header states the conventions): parsing and output matching, no I/O.

/**
 * The HTML comment that, placed just before a `sh` block (blank lines allowed), keeps it from being
 * run: `<!-- check-readme: skip -->`, optionally with a reason after `skip`
 * (`<!-- check-readme: skip (needs a Cloudflare account) -->`).
 */
export const SKIP_MARKER = /^<!--\s*check-readme:\s*skip(\s.*)?-->$/;

/** In an expected line, matches any run of characters (zero or more); alone on a line, zero or more lines. */
export const ELLIPSIS = "…";

/** One fenced block whose info string is `sh`. */
export interface ShellBlock {
  /** 1-based line of the opening fence in the markdown file; the block's first line is `line + 1`. */
  line: number;
  /** The block's text without its fences (and without the fence's indentation), ending in a newline. */
  source: string;
  /** Whether a SKIP_MARKER comment precedes the block. */
  skip: boolean;
  /**
   * The lines of the `text` block that follows it (no other fenced block and no heading between),
   * trailing whitespace trimmed and trailing empty lines dropped; null when there is none.
   */
  expected: string[] | null;
  /** 1-based line of the expected output's opening fence; null when there is none. */
  expectedLine: number | null;
}

interface Fence {
  line: number;
  info: string;
  body: string[];
}

type Item = { kind: "fence"; fence: Fence } | { kind: "heading" } | { kind: "skip" } | { kind: "prose" };

const OPENING_FENCE = /^(\s*)(`{3,}|~{3,})\s*(.*)$/;
const ATX_HEADING = /^ {0,3}#{1,6}(\s|$)/;

/**
 * The `sh` blocks of `markdown` in file order. Fences are CommonMark's (three or more backticks or
 * tildes, closed by at least as many of the same character; any indentation, which is removed from
 * the block's lines); the info string's first word is the block's language. Headings are ATX
 * headings (`# …`); setext headings (a line underlined with `===`) are not recognised.
 *
 * @throws Error naming the line of a fence that is never closed.
 */
export function parseShellBlocks(markdown: string): ShellBlock[] {
  const lines = markdown.split(/\r?\n/);
  const items: Item[] = [];
  for (let index = 0; index < lines.length; index++) {
    const text = lines[index] ?? "";
    const open = OPENING_FENCE.exec(text);
    if (open && !(open[2]?.startsWith("`") && open[3]?.includes("`"))) {
      const indent = open[1]?.length ?? 0;
      const marker = open[2] ?? "```";
      const close = new RegExp(`^\\s*${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`);
      const fence: Fence = { line: index + 1, info: (open[3] ?? "").trim().split(/\s+/)[0] ?? "", body: [] };
      let closed = false;
      for (index++; index < lines.length; index++) {
        const bodyLine = lines[index] ?? "";
        if (close.test(bodyLine)) {
          closed = true;
          break;
        }
        fence.body.push(bodyLine.replace(new RegExp(`^ {0,${indent}}`), ""));
      }
      if (!closed) throw new Error(`the fenced block opened at line ${fence.line} is never closed`);
      items.push({ kind: "fence", fence });
    } else if (ATX_HEADING.test(text)) {
      items.push({ kind: "heading" });
    } else if (SKIP_MARKER.test(text.trim())) {
      items.push({ kind: "skip" });
    } else if (text.trim() !== "") {
      items.push({ kind: "prose" });
    }
  }
  const blocks: ShellBlock[] = [];
  items.forEach((item, index) => {
    if (item.kind !== "fence" || item.fence.info !== "sh") return;
    let expected: Fence | null = null;
    for (const next of items.slice(index + 1)) {
      if (next.kind === "heading") break;
      if (next.kind === "fence") {
        if (next.fence.info === "text") expected = next.fence;
        break;
      }
    }
    blocks.push({
      line: item.fence.line,
      source: `${item.fence.body.join("\n")}\n`,
      skip: items[index - 1]?.kind === "skip",
      expected: expected ? normalizeOutput(expected.body.join("\n")) : null,
      expectedLine: expected ? expected.line : null,
    });
  });
  return blocks;
}

/** `text` as lines: trailing whitespace trimmed from each, trailing empty lines dropped. */
export function normalizeOutput(text: string): string[] {
  const lines = text.split(/\r?\n/).map((line) => line.trimEnd());
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  return lines;
}

const patterns = new Map<string, RegExp>();

/** Whether `actual` matches the expected line `pattern`: literal text, each ELLIPSIS any run of characters. */
export function lineMatches(pattern: string, actual: string): boolean {
  if (!pattern.includes(ELLIPSIS)) return pattern === actual;
  let regex = patterns.get(pattern);
  if (!regex) {
    const parts = pattern.split(ELLIPSIS).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    regex = new RegExp(`^${parts.join(".*")}$`, "s");
    patterns.set(pattern, regex);
  }
  return regex.test(actual);
}

/**
 * One line of a diff: `" "` an actual line the expected output accounts for, `"-"` an expected line
 * nothing printed, `"+"` a printed line nothing expected.
 */
export interface DiffLine {
  op: " " | "-" | "+";
  text: string;
}

/**
 * Compares the printed lines with the expected ones (both as normalizeOutput gives them). An expected
 * line that is exactly ELLIPSIS stands for zero or more whole lines; other lines match by lineMatches.
 * The diff is the one with the fewest `-` and `+` lines; `matches` is true when it has none.
 */
export function diffOutput(expected: string[], actual: string[]): { matches: boolean; lines: DiffLine[] } {
  const rows = expected.length + 1;
  const columns = actual.length + 1;
  // cost[i * columns + j]: fewest unmatched lines when expected[i..] is set against actual[j..].
  const cost = new Int32Array(rows * columns);
  const at = (i: number, j: number) => cost[i * columns + j] ?? 0;
  for (let i = expected.length; i >= 0; i--) {
    for (let j = actual.length; j >= 0; j--) {
      if (i === expected.length) {
        cost[i * columns + j] = actual.length - j;
        continue;
      }
      const pattern = expected[i] ?? "";
      if (pattern === ELLIPSIS) {
        cost[i * columns + j] = Math.min(
          at(i + 1, j),
          j < actual.length ? at(i, j + 1) : Number.MAX_SAFE_INTEGER,
        );
        continue;
      }
      let best = 1 + at(i + 1, j);
      if (j < actual.length) {
        best = Math.min(best, 1 + at(i, j + 1));
        if (lineMatches(pattern, actual[j] ?? "")) best = Math.min(best, at(i + 1, j + 1));
      }
      cost[i * columns + j] = best;
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < expected.length || j < actual.length) {
    const pattern = expected[i];
    const line = actual[j];
    const here = at(i, j);
    if (pattern === ELLIPSIS) {
      if (line !== undefined && at(i, j + 1) === here) {
        lines.push({ op: " ", text: line });
        j++;
      } else i++;
    } else if (
      pattern !== undefined &&
      line !== undefined &&
      lineMatches(pattern, line) &&
      at(i + 1, j + 1) === here
    ) {
      lines.push({ op: " ", text: line });
      i++;
      j++;
    } else if (pattern !== undefined && at(i + 1, j) + 1 === here) {
      lines.push({ op: "-", text: pattern });
      i++;
    } else {
      lines.push({ op: "+", text: line ?? "" });
      j++;
    }
  }
  return { matches: at(0, 0) === 0, lines };
}
