/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import readmeText from "../README.md?raw";

// Comments cite what a reader can open: a heading that exists in README.md or in a page of docs/,
// a path that exists, a symbol of that path, another repository by its owner/name or URL; never an
// issue number alone. And README.md's Project layout lists every folder of src/. The repository's
// files come through Vite's import.meta.glob, read when the test is built: the test runs inside
// workerd, which has no file system.

/** The texts whose comments are checked (strings too under src/, where they become API docs). */
const SOURCES = import.meta.glob<string>(
  [
    "/src/**/*.{ts,tsx}",
    "/test/**/*.ts",
    "/test-browser/**/*.ts",
    "/scripts/**/*.{ts,mjs,js}",
    "/fakes/**/*.ts",
    "/public/**/*.js",
    "/client/index.*",
    "/*.ts",
    "!/public/vendor/**",
    "!/worker-configuration.d.ts",
    "!/test/comment-citations.test.ts",
  ],
  { query: "?raw", import: "default", eager: true },
);

/** The pages of docs/ by path (`docs/contacts.md`), which comments cite as they cite the README. */
const DOCS_PAGES = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>("/docs/*.md", { query: "?raw", import: "default", eager: true }),
  ).map(([path, text]) => [path.slice(1), text]),
);

/** Every file of the repository (not loaded: only the names count), without the leading `/`. */
const FILES = new Set(
  Object.keys(import.meta.glob(["/**", "!/node_modules/**"])).map((path) => path.slice(1)),
);

// --- Comments -------------------------------------------------------------------------------

interface Block {
  /** The line the comment (or string) starts on. */
  line: number;
  /** Its text: markers and each line's leading `*` removed, whitespace collapsed. */
  text: string;
  kind: "comment" | "string";
}

/** After these a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set([..."(,=:[!&|?{};+-*%<>~^"]);
const KEYWORD_BEFORE_REGEX = /^(?:return|typeof|case|in|of|new|delete|void|throw|yield|await|else|do)$/;

/**
 * The comments of a JavaScript or TypeScript source, and its string and template literals (those
 * `+` joins as one). Consecutive line comments alone on their lines form one block. Strings and
 * regular expressions never span lines here, so a misread (JSX text, say) ends with its line.
 * Checked once against TypeScript's own scanner on every file of the repository: the same comments.
 */
function blocks(source: string): Block[] {
  const found: (Block & { lineComment?: boolean })[] = [];
  const templateDepths: number[] = [];
  let i = 0;
  let line = 1;
  let last = "";
  let lastWord = "";
  let depth = 0;
  let lastLineComment = -1;
  let string: Block | null = null;
  let joined = false;
  const endString = () => {
    if (string) found.push(string);
    string = null;
  };
  const addString = (at: number, text: string) => {
    if (string && joined) string.text += text;
    else {
      endString();
      string = { line: at, text, kind: "string" };
    }
    joined = false;
  };
  const readTemplate = (at: number) => {
    let text = "";
    while (i < source.length) {
      const ch = source[i];
      if (ch === "\\") {
        if (source[i + 1] === "\n") line++;
        text += source.slice(i, i + 2);
        i += 2;
      } else if (ch === "`") {
        i++;
        last = "`";
        return addString(at, text);
      } else if (ch === "$" && source[i + 1] === "{") {
        i += 2;
        templateDepths.push(depth++);
        last = "{";
        return addString(at, text);
      } else {
        if (ch === "\n") line++;
        text += ch;
        i++;
      }
    }
  };
  while (i < source.length) {
    const ch = source[i] as string;
    const next = source[i + 1];
    if (ch === "\n") {
      line++;
      i++;
    } else if (/\s/.test(ch)) {
      i++;
    } else if (ch === "/" && next === "/") {
      const end = source.indexOf("\n", i) === -1 ? source.length : source.indexOf("\n", i);
      const text = source.slice(i + 2, end).trim();
      const alone = source.slice(source.lastIndexOf("\n", i - 1) + 1, i).trim() === "";
      const previous = found.at(-1);
      if (alone && previous?.lineComment && lastLineComment === line - 1) previous.text += ` ${text}`;
      else found.push({ line, text, kind: "comment", lineComment: alone });
      lastLineComment = line;
      i = end;
    } else if (ch === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2) === -1 ? source.length : source.indexOf("*/", i + 2);
      const raw = source.slice(i + 2, end);
      const text = raw
        .split("\n")
        .map((l) => l.replace(/^\s*\*?/, "").trim())
        .join(" ")
        .replace(/^\*+/, "");
      found.push({ line, text, kind: "comment" });
      line += raw.split("\n").length - 1;
      i = end + 2;
    } else if (ch === "'" || ch === '"') {
      let j = i + 1;
      let text = "";
      while (j < source.length && source[j] !== ch && source[j] !== "\n") {
        const step = source[j] === "\\" ? 2 : 1;
        text += source.slice(j, j + step);
        j += step;
      }
      addString(line, text);
      last = ch;
      i = j + 1;
    } else if (ch === "`") {
      i++;
      readTemplate(line);
    } else {
      if (ch === "/" && (last === "" || BEFORE_REGEX.has(last) || KEYWORD_BEFORE_REGEX.test(lastWord))) {
        let j = i + 1;
        let inClass = false;
        while (j < source.length && source[j] !== "\n" && (inClass || source[j] !== "/")) {
          if (source[j] === "\\") j++;
          else if (source[j] === "[") inClass = true;
          else if (source[j] === "]") inClass = false;
          j++;
        }
        if (source[j] === "/") {
          i = j + 1;
          last = ")";
          lastWord = "";
          endString();
          continue;
        }
      }
      if (ch === "}" && templateDepths.at(-1) === depth - 1) {
        templateDepths.pop();
        depth--;
        i++;
        joined = false;
        readTemplate(line);
        continue;
      }
      if (ch === "{") depth++;
      if (ch === "}") depth--;
      if (ch === "+") joined = true;
      else {
        endString();
        joined = false;
      }
      const word = /^[\w$]+/.exec(source.slice(i, i + 64))?.[0];
      last = word ? "a" : ch;
      lastWord = word ?? "";
      i += word ? word.length : 1;
    }
  }
  endString();
  return found.map(({ line: at, text, kind }) => ({
    line: at,
    text: text.replace(/\s+/g, " ").trim(),
    kind,
  }));
}

// --- Citations of README.md and of docs/*.md -------------------------------------------------

interface Heading {
  level: number;
  title: string;
  parent: Heading | null;
  /** The lines of its section, subsections included: [start, end). */
  start: number;
  end: number;
}

interface Readme {
  text: string;
  lines: string[];
  headings: Heading[];
}

/** A Markdown text's headings (outside code fences), each with the lines of its section. */
function readme(text: string): Readme {
  const lines = text.split("\n");
  const headings: Heading[] = [];
  let fenced = false;
  for (const [index, l] of lines.entries()) {
    if (/^\s*(```|~~~)/.test(l)) fenced = !fenced;
    const match = fenced ? null : /^(#{1,6}) +(.+?)\s*$/.exec(l);
    if (!match) continue;
    const level = (match[1] as string).length;
    let parent = headings.at(-1) ?? null;
    while (parent && parent.level >= level) parent = parent.parent;
    headings.push({ level, title: match[2] as string, parent, start: index, end: lines.length });
  }
  for (const [index, heading] of headings.entries()) {
    const next = headings.slice(index + 1).find((h) => h.level <= heading.level);
    if (next) heading.end = next.start;
  }
  return { text, lines, headings };
}

const isUnder = (heading: Heading, ancestor: Heading) => {
  for (let p = heading.parent; p; p = p.parent) if (p === ancestor) return true;
  return false;
};

/** A heading is cited by its title, or by its part before a colon ("Real gateways"). */
const namesOf = (heading: Heading) => {
  const colon = heading.title.indexOf(":");
  return colon > 0 ? [heading.title, heading.title.slice(0, colon)] : [heading.title];
};

/** The heading `text` starts with (optionally in quotes), by its longest name, any case. */
function headingAt(doc: Readme, text: string, among: (h: Heading) => boolean) {
  const open = /^["“]/.exec(text)?.[0] ?? "";
  const rest = text.slice(open.length).toLowerCase();
  let best: { heading: Heading; length: number; name: string } | null = null;
  for (const heading of doc.headings.filter(among)) {
    for (const name of namesOf(heading)) {
      const after = rest.slice(name.length);
      if (!rest.startsWith(name.toLowerCase()) || /^[\p{L}\p{N}]/u.test(after)) continue;
      const close = open ? (/^["”]/.exec(after)?.[0] ?? null) : "";
      if (close === null) continue;
      const length = open.length + name.length + close.length;
      if (!best || length > best.length) best = { heading, length, name };
    }
  }
  return best;
}

/** The walkthrough steps (`**N.` at a line's start) in a heading's section. */
const stepsIn = (doc: Readme, heading: Heading) =>
  new Set(
    doc.lines
      .slice(heading.start, heading.end)
      .flatMap((l) => /^\*\*(\d+)\./.exec(l)?.[1] ?? [])
      .map(Number),
  );

const plain = (text: string) => text.replace(/[`*_]/g, "").replace(/\s+/g, " ");

/**
 * What is wrong with each citation in `text` of a document of `documents` (keyed "README" and
 * "docs/<page>.md"). A citation is the document then `, X`, `'s X` or ` "X"` (for the README also
 * ` X` and ` (X`), where X is a heading's title in that document (or its part before a colon; quotes
 * allowed) and may go on with `→ Y` or `, Y` for a heading Y within X's section, `, step N` or
 * `, steps N–M` for walkthrough steps of that section, `: \`code\`` for words the section holds, and
 * ` and Z` for another heading of the same document; or the document then `: "words"`, words it
 * holds. "README" alone is not a citation. A docs page (or README.md) is a path otherwise, also
 * before `, ` and a lower-case word ("docs/x.md, which…"); pathProblems checks it, but one that does
 * not exist is a problem here too, strings included. A "README" within a citation ("docs/x.md, The
 * README check") is part of it.
 */
function citationProblems(documents: ReadonlyMap<string, Readme>, text: string): string[] {
  const problems: string[] = [];
  let cited = 0;
  for (const match of text.matchAll(/\bREADME(?:\.md)?\b|(?<![\w./-])docs\/[\w.-]+\.md(?![\w/-])/g)) {
    if (match.index < cited) continue;
    const name = match[0];
    // "README.md" is a path like a docs page: a citation only when a heading or words follow.
    const page = name !== "README";
    const doc = documents.get(name === "README.md" ? "README" : name);
    const after = text.slice(match.index + name.length);
    if (!doc) {
      problems.push(`${name}: no such page`);
      continue;
    }
    const words = /^:\s*["“]([^"”]+)["”]/.exec(after)?.[1];
    if (words !== undefined) {
      if (!plain(doc.text).includes(plain(words))) problems.push(`${name}: "${words}": not in ${name}`);
      continue;
    }
    const lead = (page ? /^(?:, (?=[A-Z"“])|'s | (?=["“]))/ : /^(?:, |'s | \(|: | )/).exec(after)?.[0];
    if (page && lead === undefined) continue;
    let rest = lead === undefined ? "" : after.slice(lead.length);
    const first = lead === undefined ? null : headingAt(doc, rest, () => true);
    if (!first) {
      problems.push(`${name}${after.slice(0, 48)}…: names no heading of ${name}`);
      continue;
    }
    let section = first.heading;
    cited = text.length - rest.length + first.length;
    if (first.name !== section.title && rest.slice(first.length).startsWith(":"))
      problems.push(`${name}, ${rest.slice(0, 60)}…: cite "${section.title}" whole, or up to its colon`);
    rest = rest.slice(first.length);
    for (;;) {
      const separator = /^(?: → |, )/.exec(rest)?.[0];
      if (separator === undefined) break;
      const sub = headingAt(doc, rest.slice(separator.length), (h) => isUnder(h, section));
      if (sub) {
        section = sub.heading;
        rest = rest.slice(separator.length + sub.length);
        cited = text.length - rest.length;
        continue;
      }
      const steps = /^, steps? (\d+)(?:[–-](\d+))?/.exec(rest);
      if (steps) {
        const held = stepsIn(doc, section);
        for (let step = Number(steps[1]); step <= Number(steps[2] ?? steps[1]); step++)
          if (!held.has(step)) problems.push(`${name}, ${section.title}, step ${step}: not in that section`);
        rest = rest.slice(steps[0].length);
      } else if (separator === " → ") {
        problems.push(`${name}, ${section.title} → ${rest.slice(3, 40)}…: no such heading under it`);
      }
      break;
    }
    const code = /^: `([^`]+)`/.exec(rest)?.[1];
    if (code !== undefined && !doc.lines.slice(section.start, section.end).some((l) => l.includes(code)))
      problems.push(`${name}, ${section.title}: \`${code}\` is not in that section`);
    if (
      rest.startsWith(" and ") &&
      /^(?!README|docs\/)[A-Z"“]/.test(rest.slice(5)) &&
      !headingAt(doc, rest.slice(5), () => true)
    )
      problems.push(`${name}, … and ${rest.slice(5, 40)}…: no such heading in ${name}`);
  }
  return problems;
}

// --- Paths, symbols, issue numbers -----------------------------------------------------------

/**
 * Other repositories whose files comments cite: a path a comment names beside one of them is read
 * there, not here.
 */
const OTHER_REPOSITORY =
  /\bgithub\.com\/[\w.-]+\/[\w.-]+|\b(?:devlikeapro\/waha(?:-docs)?|(?:EvolutionAPI|evolution-foundation)\/evolution-api|facebook\/openapi)\b|@[\w-]+\/[\w-]+/;

/** A relative file path: at least one folder and a file name with a known extension. */
const PATH =
  /(?<![\w./:@\\-])(?:\.{1,2}\/)?(?:[\w.-]+\/)+[\w.-]+\.(?:tsx?|mjs|cjs|js|json|sql|toml|md|ya?ml|html|css|png)(?![\w/])/g;

/** The folders a path in a comment of `file` may be relative to: the root, src/, `file`'s and up. */
function foldersFor(file: string): string[] {
  const folders = ["", "src/"];
  for (let dir = file.slice(0, file.lastIndexOf("/") + 1); dir; dir = dir.replace(/[^/]+\/$/, ""))
    folders.push(dir);
  return folders;
}

/** The repository file `path` names from a comment of `file`, or undefined. */
function resolve(files: Set<string>, file: string, path: string): string | undefined {
  return foldersFor(file)
    .map((dir) => new URL(path, `file:///${dir}`).pathname.slice(1))
    .find((candidate) => files.has(candidate));
}

/**
 * Paths that name no file, and symbols cited after a path (`path.ts \`name\``) that the file does
 * not hold, unless the comment names another repository.
 */
function pathProblems(
  files: Set<string>,
  read: (path: string) => string | undefined,
  file: string,
  text: string,
) {
  if (OTHER_REPOSITORY.test(text)) return [];
  const problems: string[] = [];
  for (const match of text.matchAll(new RegExp(`(${PATH.source})(?: \`([A-Za-z_$][\\w$]*))?`, "g"))) {
    const path = match[1] as string;
    const found = resolve(files, file, path);
    if (!found) problems.push(`${path}: no such file`);
    const symbol = match[2];
    const source = found && read(found);
    if (symbol && source !== undefined && !new RegExp(`\\b${symbol.replace("$", "\\$")}\\b`).test(source))
      problems.push(`${path} \`${symbol}\`: not in that file`);
  }
  return problems;
}

/** "issue 22", "PR #12", a bare "#22": numbers of an issue tracker the reader cannot open. */
function issueProblems(text: string): string[] {
  return [...text.matchAll(/\b(?:issues?|PR|pull request) #?\d+|(?<![\w/.-])#\d+\b/gi)].map(
    (match) => `"${match[0]}": an issue number without its repository (write owner/name#N or a URL)`,
  );
}

// --- The README's project layout -------------------------------------------------------------

/**
 * What the README's "Project layout" misses: a folder of src/ it does not list (a top folder as
 * its own `src/x/` entry, a folder below one as `y/` in that entry), and a `.ts` file an entry
 * names that is not in the entry's folder.
 */
function layoutProblems(doc: Readme, files: Set<string>): string[] {
  const section = doc.headings.find((h) => h.title === "Project layout");
  if (!section) return ['no "Project layout" heading'];
  const entries = new Map<string, string>();
  let current: string | null = null;
  for (const l of doc.lines.slice(section.start, section.end)) {
    const entry = /^(src\/(?:[\w-]+\/)*)\s+(.*)$/.exec(l);
    if (entry) {
      current = entry[1] as string;
      entries.set(current, entry[2] as string);
    } else if (current && /^\s+\S/.test(l)) entries.set(current, `${entries.get(current)} ${l.trim()}`);
    else current = null;
  }
  const folders = new Set(
    [...files].filter((f) => f.startsWith("src/")).map((f) => f.slice(0, f.lastIndexOf("/") + 1)),
  );
  const problems: string[] = [];
  for (const folder of [...folders].sort()) {
    if (folder === "src/") continue;
    const top = /^src\/[\w-]+\//.exec(folder)?.[0] as string;
    const text = entries.get(top);
    if (text === undefined) problems.push(`${top}: no entry`);
    else if (folder !== top && !new RegExp(`(?<![\\w-])${folder.slice(top.length)}`).test(text))
      problems.push(`${folder}: not named in the entry of ${top}`);
  }
  for (const [folder, text] of entries) {
    for (const name of text.match(/(?<![\w.>-])[\w-]+\.tsx?\b/g) ?? []) {
      const held = [...files].some((f) =>
        folder === "src/" ? f === `src/${name}` : f.startsWith(folder) && f.endsWith(`/${name}`),
      );
      if (!held) problems.push(`${folder}: names ${name}, which is not there`);
    }
  }
  return problems;
}

// --- The checks ------------------------------------------------------------------------------

const README = readme(readmeText);
const DOCUMENTS = new Map<string, Readme>([
  ["README", README],
  ...Object.entries(DOCS_PAGES).map(([path, text]) => [path, readme(text)] as const),
]);
const read = (path: string) => SOURCES[`/${path}`];

/** Every problem of every checked file, as `file:line: problem`, and how many citations were read. */
function check(sources: Record<string, string>) {
  const problems: string[] = [];
  let citations = 0;
  let pageCitations = 0;
  let paths = 0;
  for (const [key, source] of Object.entries(sources)) {
    const file = key.slice(1);
    for (const block of blocks(source)) {
      if (block.kind === "string" && !(file.startsWith("src/") && /\bREADME\b|docs\//.test(block.text)))
        continue;
      const pages = block.text.match(/(?<![\w./-])docs\/[\w.-]+\.md, /g)?.length ?? 0;
      citations += (block.text.match(/\bREADME\b/g)?.length ?? 0) + pages;
      pageCitations += pages;
      const found = citationProblems(DOCUMENTS, block.text);
      if (block.kind === "comment") {
        paths += block.text.match(PATH)?.length ?? 0;
        found.push(...pathProblems(FILES, read, file, block.text), ...issueProblems(block.text));
      }
      problems.push(...found.map((problem) => `${file}:${block.line}: ${problem}`));
    }
  }
  return { problems, citations, pageCitations, paths };
}

describe("comments cite what a reader can open", () => {
  it("reads the repository's files", () => {
    expect(Object.keys(SOURCES).length).toBeGreaterThan(400);
    expect(FILES.has("src/index.ts") && FILES.has("README.md")).toBe(true);
    expect(Object.keys(DOCS_PAGES)).toContain("docs/contacts.md");
  });

  it("every README or docs/ citation names a heading, step or words its document has; every path and symbol exists; no issue numbers", () => {
    const { problems, citations, pageCitations, paths } = check(SOURCES);
    expect(problems).toEqual([]);
    // Guards against a reader that finds nothing to check.
    expect(citations).toBeGreaterThan(300);
    expect(pageCitations).toBeGreaterThan(200);
    expect(paths).toBeGreaterThan(100);
  });

  it("the README's Project layout lists every folder of src/ and the files it names exist", () => {
    expect(layoutProblems(README, FILES)).toEqual([]);
  });
});

describe("the checks catch a bad citation", () => {
  const problemsOf = (source: string, file = "src/otp/example.ts") =>
    check({ [`/${file}`]: source }).problems.map((p) => p.replace(/^[^:]+:\d+: /, ""));

  it("README headings, nesting, steps and quoted words", () => {
    expect(problemsOf("// (README, Project layout)")).toEqual([]);
    expect(problemsOf("/** README, Walkthrough → One-time codes; README, Walkthrough, Webhooks. */")).toEqual(
      [],
    );
    expect(problemsOf("// README, Walkthrough, steps 2–8 and README, Messages, step 16")).toEqual([]);
    expect(problemsOf('// (README "Deploying"; README: "A send-only key")')).toEqual([]);
    expect(problemsOf("// (README, No such heading)")).toHaveLength(1);
    // Reference sections live in docs/ now: the README no longer has them.
    expect(problemsOf("// (README, Session health)")).toHaveLength(1);
    expect(problemsOf("// (README, Walkthrough → Statistics)")).toHaveLength(1);
    expect(problemsOf("// (README, Sessions, step 13)")).toHaveLength(1);
    expect(problemsOf('// README: "words it never says"')).toHaveLength(1);
    expect(problemsOf("// README, Deploying: `no_such_words`")).toHaveLength(1);
    expect(problemsOf("// the README says so")).toHaveLength(1);
    // A citation wrapped over two comment lines is read whole.
    expect(problemsOf("// (README, Walkthrough →\n// One-time codes)")).toEqual([]);
    expect(problemsOf("/*\n * (README, Walkthrough →\n * Statistics)\n */")).toHaveLength(1);
    // Strings of src/ (API descriptions) are read too, joined across `+`.
    expect(problemsOf('const d = "limits (README, " +\n  "Walkthrough, Campaigns)";')).toEqual([]);
    expect(problemsOf('const d = "see README, " + "Nowhere";')).toHaveLength(1);
  });

  it("docs/ pages: headings, nesting and quoted words of the page named", () => {
    expect(problemsOf("// (docs/sessions.md, Session health)")).toEqual([]);
    expect(
      problemsOf("/** docs/otp.md, Reverse OTP; docs/messages.md, Sending messages → Polls. */"),
    ).toEqual([]);
    expect(problemsOf("// docs/databases.md, Databases, Moving an account")).toEqual([]);
    expect(problemsOf("// docs/gateways.md, WhatsApp Cloud API → Message templates")).toEqual([]);
    expect(problemsOf('// (docs/security.md "Hardening"; docs/otp.md: "After 5 wrong codes")')).toEqual([]);
    expect(problemsOf("// docs/errors.md, Errors: `otp_invalid`")).toEqual([]);
    expect(
      problemsOf("// docs/campaigns.md, Campaigns and docs/contacts.md, Contacts; docs/security.md's Media"),
    ).toEqual([]);
    // A page named as a path alone is a path, which exists; a README in a heading is the heading's.
    expect(problemsOf("// the tables of docs/retention.md, which the job reads.")).toEqual([]);
    expect(problemsOf("// the walkthrough check (docs/development.md, The README check)")).toEqual([]);
    // A heading the page lacks (though another page has it), or a sub-heading under another one.
    expect(problemsOf("// (docs/contacts.md, Session health)")).toHaveLength(1);
    expect(problemsOf("// docs/messages.md, Sending messages → Chat actions")).toHaveLength(1);
    expect(problemsOf("// docs/campaigns.md, Campaigns and Erasure")).toHaveLength(1);
    expect(problemsOf('// docs/security.md: "After 5 wrong codes"')).toHaveLength(1);
    expect(problemsOf("// docs/errors.md, Errors: `no_such_error_code`")).toHaveLength(1);
    // A page that does not exist: as a citation, as a path, and in a string of src/.
    expect(problemsOf("// docs/nowhere.md, Contacts")).toEqual([
      "docs/nowhere.md: no such page",
      "docs/nowhere.md: no such file",
    ]);
    expect(problemsOf('const d = "(docs/nowhere.md, Contacts)";')).toEqual(["docs/nowhere.md: no such page"]);
    expect(problemsOf('const d = "the limit (docs/security.md, " +\n  "Account limits)";')).toEqual([]);
    expect(problemsOf('const d = "see docs/security.md, " + "Nowhere";')).toHaveLength(1);
  });

  it("paths, symbols and issue numbers", () => {
    expect(
      problemsOf("// src/lib/time.ts `formatTimestamp`; lib/session-health.ts; schema/otp.ts", "src/db/x.ts"),
    ).toEqual([]);
    expect(problemsOf("// src/lib/no-such-file.ts")).toEqual(["src/lib/no-such-file.ts: no such file"]);
    expect(problemsOf("// src/lib/time.ts `noSuchFunction`")).toHaveLength(1);
    expect(problemsOf("// src/structures/sessions.dto.ts")).toHaveLength(1);
    expect(
      problemsOf("// devlikeapro/waha's src/structures/sessions.dto.ts (devlikeapro/waha#2186)"),
    ).toEqual([]);
    expect(problemsOf("// as settled in issue 22")).toHaveLength(1);
    expect(problemsOf("// fixed by #22")).toHaveLength(1);
    expect(problemsOf("// https://github.com/o/r/issues/22, see #anchor")).toEqual([]);
  });

  it("only comments count: strings, regular expressions and template literals are not comments", () => {
    const source = [
      'const url = "https://example.com/issue 22"; // a comment',
      "const re = /\\/\\/ issue 22/; const n = 1 / 2; // two",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a source text, template literals and all
      "const t = `${`#1 ${n}`} // issue 22`; /* three */",
    ].join("\n");
    expect(blocks(source).filter((b) => b.kind === "comment")).toEqual([
      { line: 1, text: "a comment", kind: "comment" },
      { line: 2, text: "two", kind: "comment" },
      { line: 3, text: "three", kind: "comment" },
    ]);
    expect(problemsOf(source, "test/example.ts")).toEqual([]);
  });

  it("a src/ folder missing from the layout", () => {
    expect(
      layoutProblems(README, new Set([...FILES, "src/nowhere/a.ts", "src/gateways/elsewhere/b.ts"])),
    ).toEqual(["src/gateways/elsewhere/: not named in the entry of src/gateways/", "src/nowhere/: no entry"]);
  });
});
