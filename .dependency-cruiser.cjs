// Layering rules, checked by `npm run lint` (STYLE.md, "Stairs run down" and "Floors are folders").
//
// The top-level folders of src/ are floors, lowest first. A folder imports only folders below it,
// so no two folders import each other, directly or round a ring. Domain vocabulary (types, enums,
// id helpers) lives on its domain's floor; rendering a row for the API or an event lives in
// presenters/, above the domains, so events/ stays a leaf. A new folder gets its floor here.
const FLOORS = [
  "lib", // small pure helpers
  "media", // media of outgoing messages: fetched once, stored in R2, signed links to the copy
  "db", // tables and queries
  "events", // the event log: recording and publishing, knows no domain
  "billing", // money: charges, refunds, credits and their ledger entries
  "moves", // every status move of a message or campaign and what hangs off it
  "opt-outs",
  "contacts", // who is on the other side of a chat: learnt from events, known by number or user id
  "messages", // vocabulary, the send and the queue message it produces, incoming messages
  "gateways", // the chat networks' APIs
  "delivery", // the outbound queue's consumer, the outbox, pacing, retries, failover
  "sessions", // the session Durable Object
  "number-checks", // whether numbers are on the chat network: cached answers, asked through sessions
  "chat-actions", // what a session does to messages already in a chat (mark read, delete, edit), through its object
  "campaigns",
  "otp",
  "keys",
  "links",
  "presenters", // rows as the API and events show them
  "webhooks",
  "archives", // messages and OTPs past their retention, moved to R2 as gzipped NDJSON
  "erasures", // a contact's data erased on request: keyed hashes of addresses, phases, the runner
  "account-moves", // an account's move between account databases: hold, copy, count, switch, delete
  "jobs", // the hourly housekeeping, run by the cron trigger and by POST /admin/jobs/{name}
  "middleware",
  "web",
  "routes",
];

/** One rule per floor: it imports no folder above it. */
const floorRules = FLOORS.map((folder, index) => {
  const above = FLOORS.slice(index + 1);
  return {
    name: `floor-${folder}`,
    comment: `src/${folder} imports only folders below it (${FLOORS.slice(0, index).join(", ") || "none"}): not ${above.join(", ")}.`,
    severity: "error",
    from: { path: `^src/${folder}/` },
    to: { path: `^src/(${above.join("|")})/` },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...floorRules.filter((rule) => rule.to.path !== "^src/()/"),
    {
      name: "every-folder-has-a-floor",
      comment: "Every top-level folder of src/ is on a floor of FLOORS in .dependency-cruiser.cjs.",
      severity: "error",
      from: { path: "^src/[^/]+/" },
      to: { path: "^src/[^/]+/", pathNot: `^src/(${FLOORS.join("|")})/` },
    },
    {
      name: "foundation-files-import-only-lib",
      comment: "src/errors.ts and src/config.ts sit below every folder but lib.",
      severity: "error",
      from: { path: "^src/(errors|config)[.]ts$" },
      to: { path: "^src/", pathNot: "^src/(lib/|errors[.]ts$|config[.]ts$)" },
    },
    {
      name: "no-folder-cycle",
      comment: "No ring of folders importing one another, at any depth below src/.",
      severity: "error",
      scope: "folder",
      from: { path: "^src/[^/]+" },
      to: { circular: true },
    },
    {
      name: "no-route-imports-another-routes-handlers",
      comment:
        "Shared code lives in its concern's folder (sessions/stub.ts, gateways/index.ts), not in a route's handlers.",
      severity: "error",
      from: { path: "^src/routes/([^/]+)/" },
      to: { path: "^src/routes/([^/]+)/[^/]+[.]handlers[.]ts$", pathNot: "^src/routes/$1/" },
    },
    {
      name: "drizzle-only-in-db",
      comment:
        "One door to the database (STYLE.md): only src/db/ (and src/moves/, whose statements db/ runs) builds D1 statements; elsewhere call a named query of src/db/queries/.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(db|moves)/" },
      to: { path: "^node_modules/drizzle-orm/" },
    },
    {
      name: "no-circular",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    // Packages in their class: what the Worker imports at run time ships with it, so it is a
    // `dependencies` entry of package.json; a devDependency is there only for tools and tests.
    // The three rules are dependency-cruiser's recommended ones (`depcruise --init`'s config
    // template), limited to src/; a planted breach of each fails `npm run lint`.
    {
      name: "not-to-dev-dep",
      comment:
        "src/ runs in the Worker: a package it imports belongs in package.json's dependencies, not devDependencies. Type-only imports erase at build time and may come from devDependencies.",
      severity: "error",
      from: { path: "^src/", pathNot: "[.](?:spec|test)[.](?:js|mjs|cjs|jsx|ts|mts|cts|tsx)$" },
      to: {
        dependencyTypes: ["npm-dev"],
        dependencyTypesNot: ["type-only"],
        pathNot: ["node_modules/@types/"],
      },
    },
    {
      name: "no-non-package-json",
      comment:
        "A package src/ imports that package.json does not name (it is there only as another package's dependency) may be missing, or another version, in a deployment: add it to dependencies.",
      severity: "error",
      from: { path: "^src/" },
      to: { dependencyTypes: ["npm-no-pkg", "npm-unknown"] },
    },
    {
      name: "not-to-unresolvable",
      comment:
        "An import of src/ that resolves to no file: a package missing from node_modules, or a path that does not exist. The Worker's runtime modules (cloudflare:*) are the runtime's own.",
      severity: "error",
      from: { path: "^src/" },
      to: { couldNotResolve: true, pathNot: "^cloudflare:" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // Resolve packages through their package.json `exports`, as wrangler's bundler does: without it
    // a package that has only `exports` (fast-png) stays unresolved and escapes the package rules.
    // The conditions are wrangler's for the Worker first, then dependency-cruiser's suggested ones.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["workerd", "worker", "import", "require", "node", "default", "types"],
    },
  },
};
