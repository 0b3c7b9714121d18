import type { Db } from "../db/client";
import { resizeArchive } from "../db/queries/archives";
import type { MessageArchiveRow } from "../db/schema";
import { ARCHIVE_HTTP_METADATA } from "./archive";
import { gunzipLines, gzipLines } from "./ndjson";

/**
 * Rewrites archive `archive` with each line (a Message, parsed) passed through `change`, which
 * answers the line to keep (the same object when unchanged). The object is written again, and the
 * archive's size corrected, only when some line changed; an object already gone changes nothing.
 * Safe to run again: a second pass changes nothing a first one changed.
 * @returns how many lines changed.
 * @throws Error when R2 or D1 refuses.
 */
export async function rewriteArchive(
  env: Env,
  db: Db,
  archive: MessageArchiveRow,
  change: (line: Record<string, unknown>) => Record<string, unknown>,
): Promise<number> {
  const object = await env.ARCHIVES.get(archive.objectKey);
  if (!object) return 0;
  let changed = 0;
  const lines = (await gunzipLines(object.body)).map((text) => {
    const line = JSON.parse(text) as Record<string, unknown>;
    const after = change(line);
    if (after === line) return text;
    changed++;
    return JSON.stringify(after);
  });
  if (changed === 0) return 0;
  const body = await gzipLines(lines);
  await env.ARCHIVES.put(archive.objectKey, body, { httpMetadata: ARCHIVE_HTTP_METADATA });
  await resizeArchive(db, archive.id, archive.messageCount, body.byteLength);
  return changed;
}
