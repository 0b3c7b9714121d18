import { defineConfig } from "vitest/config";

// Browser tests (`npm run test:browser`): Node drives Debian's Chromium through playwright-core
// against the service started as a user starts it, `npm run dev`, on a free port (global-setup.ts).
export default defineConfig({
  test: {
    name: "browser",
    root: import.meta.dirname,
    include: ["**/*.test.ts"],
    environment: "node",
    globalSetup: ["./global-setup.ts"],
    // One dev server and one browser at a time: the pages share the server's clock and queues.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
