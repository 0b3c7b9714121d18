// `npm run dev` runs this first: it creates .dev.vars from the committed example when missing and
// applies the D1 migrations to the local databases, so a fresh clone serves real requests at once.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { unstable_readConfig } from "wrangler";

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("created .dev.vars from .dev.vars.example");
} else {
  // The admin API refuses an ADMIN_TOKEN under 32 characters (src/config.ts); a .dev.vars made
  // before that rule holds the old 15-character default, which becomes the example's.
  let vars = readFileSync(".dev.vars", "utf8");
  const exampleText = readFileSync(".dev.vars.example", "utf8");
  const example = exampleText.match(/^ADMIN_TOKEN=.*$/m)?.[0];
  if (example && /^ADMIN_TOKEN=dev-admin-token$/m.test(vars)) {
    vars = vars.replace(/^ADMIN_TOKEN=dev-admin-token$/m, example);
    console.log(
      `.dev.vars: ADMIN_TOKEN was the old short default; now ${example.slice("ADMIN_TOKEN=".length)}`,
    );
  }
  // Gateway secrets must be at least 32 characters (src/config.ts MIN_GATEWAY_SECRET_LENGTH); the
  // Cloud API's old 26-character dev verify token becomes the example's.
  const verifyToken = exampleText.match(/^CLOUD_API_VERIFY_TOKEN=.*$/m)?.[0];
  if (verifyToken && /^CLOUD_API_VERIFY_TOKEN=dev-cloud-api-verify-token$/m.test(vars)) {
    vars = vars.replace(/^CLOUD_API_VERIFY_TOKEN=dev-cloud-api-verify-token$/m, verifyToken);
    console.log(`.dev.vars: CLOUD_API_VERIFY_TOKEN was the old short default; now ${verifyToken.slice(23)}`);
  }
  // Variables the example gained since this .dev.vars was made (e.g. the Cloud API's dev secrets)
  // are added with the example's values; those already set are left as they are.
  const missing = exampleText
    .split("\n")
    .filter((line) => /^[A-Z_]+=/.test(line) && !new RegExp(`^${line.split("=")[0]}=`, "m").test(vars));
  if (missing.length > 0) {
    vars = `${vars.replace(/\n?$/, "\n")}${missing.join("\n")}\n`;
    console.log(
      `.dev.vars: added ${missing.map((line) => line.split("=")[0]).join(", ")} from .dev.vars.example`,
    );
  }
  writeFileSync(".dev.vars", vars);
}
// DEV_PERSIST_TO: the state folder a `npm run dev -- --persist-to <dir>` will use (the browser
// tests keep theirs apart from the developer's).
const persist = process.env.DEV_PERSIST_TO ? ["--persist-to", process.env.DEV_PERSIST_TO] : [];
// Every D1 database of wrangler.toml gets its own migrations: the directory (`DB`) those of
// migrations/directory, each account database (`DB_ACCOUNTS_<n>`) those of migrations/accounts.
// Wrangler prints a table of every migration before and after each one it applies (a dozen tables
// on a fresh clone), so its output is kept back and summarised in one line; on failure it is shown
// whole.
const { d1_databases: databases } = unstable_readConfig({ config: "./wrangler.toml" });
for (const { binding } of databases) {
  const run = spawnSync("wrangler", ["d1", "migrations", "apply", binding, "--local", ...persist], {
    encoding: "utf8",
  });
  const output = `${run.stdout ?? ""}${run.stderr ?? ""}`;
  if (run.status !== 0) {
    process.stderr.write(output);
    if (run.error) console.error(run.error.message);
    console.error(`applying the D1 migrations to the local database ${binding} failed (output above)`);
    process.exit(run.status ?? 1);
  }
  const applied = [...new Set(output.match(/\b\d{4}_[\w-]+\.sql\b/g) ?? [])];
  console.log(
    applied.length === 0
      ? `local D1 database ${binding}: migrations up to date`
      : `local D1 database ${binding}: applied ${applied.length} migration(s), ${applied[0]} … ${applied.at(-1)}`,
  );
}
