// Checks docs/readme-map.md, the table of where each section of the former one-page README.md went:
// every file it names exists and holds the heading it names (the first one of a row, and each
// "docs/<page>.md, <heading>" its notes add). Run by `npm run lint`; exits 1 naming each miss.
import { existsSync, readFileSync } from "node:fs";

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

const rows = readFileSync("docs/readme-map.md", "utf8")
  .split("\n")
  .filter((line) => /^\| #/.test(line))
  .map((line) => line.split("|").map((cell) => cell.trim()));
const problems = [];
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
  console.error(`docs/readme-map.md:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`docs/readme-map.md: ${rows.length} former headings, each found where it says`);
