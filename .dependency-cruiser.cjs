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
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
