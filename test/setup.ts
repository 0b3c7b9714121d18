import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { everyAccountD1 } from "./databases";
import { useNetwork } from "./network";

// Apply the real migrations to the test D1 databases, the directory's to `DB` and the account
// databases' to each of them (src/db/databases.ts); applyD1Migrations skips applied ones.
await applyD1Migrations(env.DB, env.TEST_DIRECTORY_MIGRATIONS);
for (const d1 of everyAccountD1()) await applyD1Migrations(d1, env.TEST_MIGRATIONS);

// Every file runs on the fake network: sends of media fetch their media_url (test/media-host.ts).
useNetwork();
