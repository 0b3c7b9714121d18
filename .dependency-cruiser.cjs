// Layering rules, checked by `npm run lint` (STYLE.md, "Stairs run down"): the database layer
// knows tables and queries only, and no route folder reaches into another route's handlers.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "db-imports-nothing-above",
      comment: "src/db knows tables and queries: it may use src/lib, never business or HTTP modules.",
      severity: "error",
      from: { path: "^src/db/" },
      to: { path: "^src/", pathNot: "^src/(db|lib)/" },
    },
    {
      name: "lib-is-pure",
      comment: "src/lib holds small pure helpers that depend on nothing else of ours.",
      severity: "error",
      from: { path: "^src/lib/" },
      to: { path: "^src/", pathNot: "^src/lib/" },
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
