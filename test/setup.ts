import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { useNetwork } from "./network";

// Apply the real migrations to the test D1 database; applyD1Migrations skips applied ones.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// Every file runs on the fake network: sends of media fetch their media_url (test/media-host.ts).
useNetwork();
