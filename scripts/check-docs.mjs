// Checks README.md and the pages of docs/ (run by `npm run lint`; exits 1 naming each miss):
// - every relative markdown link between them, `[text](path#anchor)`, names a file that exists
//   and, when it has an anchor, a heading of that file (GitHub's anchor of a heading: lower case,
//   punctuation dropped, spaces as hyphens);
// - docs/readme-map.md, the table of where each section of the former one-page README.md went:
//   every file it names holds the heading it names (the first one of a row, and each
//   "docs/<page>.md, <heading>" its notes add).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

/** The headings of a markdown file, outside fenced blocks, without their `#` marks. */
function headings(file) {
  let fence = false;
  const found = new Set();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (/^\s*```/.test(line)) fence = !fence;
    const match = !fence && line.match(/^#{1,6} (.*)$/);
    if (match) found.add(match[1].trim());
  }
  return found;
}

/** GitHub's anchor of a heading. */
const anchor = (heading) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");

const problems = [];
const pages = [
  "README.md",
  ...readdirSync("docs")
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
for (const page of pages) {
  let fence = false;
  readFileSync(page, "utf8")
    .split("\n")
    .forEach((line, index) => {
      if (/^\s*```/.test(line)) fence = !fence;
      if (fence) return;
      for (const match of line.matchAll(/\]\(([^)\s]*)\)/g)) {
        const [path, hash] = match[1].split("#");
        if (/^[a-z]+:/.test(path)) continue;
        const target = path === "" ? page : normalize(join(dirname(page), path));
        const where = `${page}:${index + 1}: ${match[1]}`;
        if (!existsSync(target)) problems.push(`${where}: no such file`);
        else if (
          hash !== undefined &&
          target.endsWith(".md") &&
          ![...headings(target)].some((h) => anchor(h) === hash)
        )
          problems.push(`${where}: no such heading`);
      }
    });
}

const rows = readFileSync("docs/readme-map.md", "utf8")
  .split("\n")
  .filter((line) => /^\| #/.test(line))
  .map((line) => line.split("|").map((cell) => cell.trim()));
for (const [, former, file, where] of rows) {
  const targets = [[file.replaceAll("`", ""), where.split(";")[0].trim()]];
  for (const match of where.matchAll(/(docs\/[a-z-]+\.md), ([^;]+)/g))
    targets.push([match[1], match[2].trim()]);
  for (const [path, heading] of targets) {
    if (!existsSync(path)) problems.push(`${former}: ${path} does not exist`);
    else if (!headings(path).has(heading)) problems.push(`${former}: ${path} has no heading "${heading}"`);
  }
}
if (rows.length < 60)
  problems.push(`docs/readme-map.md lists ${rows.length} headings; the former README had 69`);
if (problems.length > 0) {
  console.error(`README.md and docs/:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(
  `README.md and docs/: every link resolves; docs/readme-map.md: ${rows.length} former headings, each found where it says`,
);
