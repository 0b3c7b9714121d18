// `npm run dev` runs this first: it creates .dev.vars from the committed example when missing and
// applies the D1 migrations to the local database, so a fresh clone serves real requests at once.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("created .dev.vars from .dev.vars.example");
}
// DEV_PERSIST_TO: the state folder a `npm run dev -- --persist-to <dir>` will use (the browser
// tests keep theirs apart from the developer's).
const persist = process.env.DEV_PERSIST_TO ? ["--persist-to", process.env.DEV_PERSIST_TO] : [];
execFileSync("wrangler", ["d1", "migrations", "apply", "DB", "--local", ...persist], { stdio: "inherit" });
