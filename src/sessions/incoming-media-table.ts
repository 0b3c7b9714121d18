/**
 * Creates the session object's table of incoming media downloads owed (incoming-media.ts):
 * `message_id`, the gateway's `ref` to download by, its `mimetype` and the `tries` made so far.
 * Idempotent (SessionCore.setUp, on every wake).
 */
export function setUpIncomingMedia(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS incoming_media (
    message_id TEXT PRIMARY KEY, ref TEXT NOT NULL, mimetype TEXT, tries INTEGER NOT NULL DEFAULT 0)`);
}
