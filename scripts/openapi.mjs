// `npm run openapi`: writes the API document the app generates to openapi.json (committed, so a
// reviewer sees every API change in a diff). It starts the Worker in-process with wrangler's
// `unstable_startWorker` (local bindings, no server on a port to manage) and reads /openapi.json.
//
//   node scripts/openapi.mjs            # write openapi.json
//   node scripts/openapi.mjs --check    # exit 1 when openapi.json differs from the generated one
//   node scripts/openapi.mjs --out F    # write the generated document to F instead

import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { unstable_startWorker } from "wrangler";

const { values: args } = parseArgs({
  options: { check: { type: "boolean" }, out: { type: "string" } },
});
const COMMITTED = "openapi.json";

const worker = await unstable_startWorker({
  config: "wrangler.toml",
  dev: { server: { port: 0 }, inspector: false, logLevel: "error" },
});
let text;
try {
  const response = await worker.fetch("http://localhost/openapi.json");
  if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
  text = `${JSON.stringify(await response.json(), null, 2)}\n`;
} finally {
  await worker.dispose();
}

if (args.check) {
  const committed = await readFile(COMMITTED, "utf8").catch(() => "");
  if (committed !== text) {
    console.error(
      `${COMMITTED} differs from the document the code generates: run \`npm run openapi\` and commit it.`,
    );
    process.exit(1);
  }
  console.error(`${COMMITTED} matches the generated document.`);
} else {
  await writeFile(args.out ?? COMMITTED, text);
  console.error(`wrote ${args.out ?? COMMITTED}`);
}
