// The footprint rows of `npm run bench`: what D1 keeps and writes for each message, from the send
// until the message is `read` and its three webhooks (`message.sent`, `message.delivered`,
// `message.read`) have reached the account's one endpoint.
//
// A fresh account with one connected sandbox session and one endpoint on a receiver this script
// runs on 127.0.0.1 (answering 200) sends N text messages (default 10,000; --footprint-messages or
// BENCH_FOOTPRINT_MESSAGES) with delay_between 0, 1,000 recipients a send, each to a number of its
// own. The sandbox acks every message delivered and read by itself. The step waits until the
// receiver has all 3 × N deliveries and D1 is quiet, then gives two rows:
//
// 15. D1 bytes per message at rest: the page bytes (SQLite's `dbstat` virtual table, `pgsize`
//     summed over every table and index) of every D1 database file of the dev server, after less
//     before, ÷ N. The files are those under <state dir>/v3/d1/miniflare-D1DatabaseObject/ (the
//     state dir is `.wrangler/state` of the directory the server was started in; --state-dir or
//     BENCH_STATE_DIR otherwise). Each is copied with its write-ahead log and the copy is read, so
//     the running server's files are never locked. The bytes per message of each table, its
//     indexes included, go to stderr.
// 16. D1 rows written per message over the same span (`GET /admin/metrics`).

import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  api,
  cleanUp,
  connectedSession,
  createAccount,
  createEndpoint,
  d1Change,
  d1Counters,
  FOOTPRINT_MESSAGES,
  fmt,
  log,
  numbers,
  row,
  STALL_MS,
  STATE_DIR,
  send,
  sleep,
  startReceiver,
} from "./common.mjs";

const EVENTS = ["message.sent", "message.delivered", "message.read"];
const PER_SEND = 1_000;
const CONTENT = "Hello from the bench: how many bytes does this message keep?";
/** Most page bytes per message at rest, and rows written per message (the storage targets). */
const BYTES_TARGET = 1_500;
const ROWS_TARGET = 25;
/** D1 counts as quiet once its rows written have not moved for this long. */
const QUIET_MS = 3_000;
const QUIET_LIMIT_MS = 60_000;
/** miniflare's own bookkeeping file beside the databases, not a D1 database. */
const NOT_A_DATABASE = "metadata.sqlite";

/**
 * Page bytes of every table and index of one SQLite file, with the table each belongs to (an
 * index's table; a table's own name). `aggregate = TRUE` gives one row per b-tree.
 */
const PAGE_BYTES_SQL = `SELECT d.name AS name, coalesce(s.tbl_name, d.name) AS tbl,
  coalesce(s.type, 'table') AS type, d.pgsize AS bytes
  FROM dbstat AS d LEFT JOIN sqlite_schema AS s ON s.name = d.name
  WHERE d.aggregate = TRUE`;

/**
 * The rows of `sql` on the SQLite file `file`: read with `node:sqlite` where the Node that runs
 * the bench has it (22.5 and later without a flag from 22.13; `npm run bench` runs under the
 * project's pinned Node 24), else with the `sqlite3` command-line shell (Debian's `sqlite3`
 * package, built with the dbstat virtual table). The file is opened read-write: it is a copy, and
 * opening it replays its write-ahead log.
 */
async function sqliteRows(file, sql) {
  const sqlite = await import("node:sqlite").catch(() => null);
  if (sqlite) {
    const db = new sqlite.DatabaseSync(file);
    try {
      return db.prepare(sql).all();
    } finally {
      db.close();
    }
  }
  let out;
  try {
    out = execFileSync("sqlite3", ["-json", file, sql], { encoding: "utf8", maxBuffer: 64 << 20 });
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
    throw new Error(
      "footprint: this Node has no node:sqlite and there is no sqlite3 command (apt-get install sqlite3)",
    );
  }
  return out.trim() ? JSON.parse(out) : [];
}

/** Size and modification time of a file and its write-ahead log, to tell whether they moved. */
function stamp(file) {
  return [file, `${file}-wal`]
    .map((f) => {
      if (!existsSync(f)) return "-";
      const { size, mtimeMs } = statSync(f);
      return `${size}@${mtimeMs}`;
    })
    .join(" ");
}

/**
 * Copies a D1 file the dev server holds open into `dir`, with its write-ahead log: the log first,
 * since a checkpoint between the two copies then only writes into the database pages the copied
 * log holds anyway. Tried again while either file changed during the copy.
 */
function snapshot(file, dir) {
  const copy = join(dir, basename(file));
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = stamp(file);
    rmSync(copy, { force: true });
    rmSync(`${copy}-wal`, { force: true });
    if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
    copyFileSync(file, copy);
    if (stamp(file) === before) return copy;
  }
  throw new Error(`footprint: ${file} kept changing while it was copied`);
}

/**
 * Page bytes of every D1 database of the dev server: `{ files, total, byTable }`, where `byTable`
 * maps a table's name to `{ table, indexes, count }` (bytes of its own b-tree, of its indexes', and
 * how many indexes), summed over the files.
 */
async function d1PageBytes() {
  const dir = join(STATE_DIR, "v3", "d1", "miniflare-D1DatabaseObject");
  const files = existsSync(dir)
    ? readdirSync(dir).filter((name) => name.endsWith(".sqlite") && name !== NOT_A_DATABASE)
    : [];
  if (files.length === 0)
    throw new Error(
      `footprint: no D1 database under ${dir}; pass --state-dir (BENCH_STATE_DIR): the .wrangler/state of the directory the dev server was started in`,
    );
  const tmp = mkdtempSync(join(tmpdir(), "bench-d1-"));
  const byTable = new Map();
  let total = 0;
  try {
    for (const name of files) {
      for (const r of await sqliteRows(snapshot(join(dir, name), tmp), PAGE_BYTES_SQL)) {
        const bytes = Number(r.bytes);
        const entry = byTable.get(r.tbl) ?? { table: 0, indexes: 0, count: 0 };
        if (r.type === "index") {
          entry.indexes += bytes;
          entry.count++;
        } else entry.table += bytes;
        byTable.set(r.tbl, entry);
        total += bytes;
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return { files: files.length, total, byTable };
}

/** Waits until D1's rows written have not moved for {@link QUIET_MS}; returns the counters then. */
async function quietCounters() {
  const started = performance.now();
  let last = await d1Counters();
  let since = performance.now();
  while (performance.now() - started < QUIET_LIMIT_MS) {
    await sleep(500);
    const now = await d1Counters();
    if (now.isolate !== last.isolate || now.d1.rows_written !== last.d1.rows_written) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= QUIET_MS) return now;
  }
  log(`footprint: D1 still writing after ${QUIET_LIMIT_MS / 1000} s; measuring anyway`);
  return last;
}

/** Logs each table's page bytes per message (its indexes included), largest first. */
function logBreakdown(before, after, messages) {
  const perMessage = (bytes) => fmt(bytes / messages, 1);
  const tables = [...new Set([...before.byTable.keys(), ...after.byTable.keys()])]
    .map((name) => {
      const was = before.byTable.get(name) ?? { table: 0, indexes: 0, count: 0 };
      const is = after.byTable.get(name) ?? { table: 0, indexes: 0, count: 0 };
      return { name, table: is.table - was.table, indexes: is.indexes - was.indexes, count: is.count };
    })
    .filter((t) => t.table !== 0 || t.indexes !== 0)
    .sort((a, b) => b.table + b.indexes - (a.table + a.indexes));
  const width = Math.max(...tables.map((t) => t.name.length), 5);
  log(`footprint: D1 page bytes per message by table (its indexes included):`);
  for (const t of tables)
    log(
      `  ${t.name.padEnd(width)} ${perMessage(t.table + t.indexes).padStart(8)} B` +
        ` (table ${perMessage(t.table)}, ${t.count} index${t.count === 1 ? "" : "es"} ${perMessage(t.indexes)})`,
    );
}

/** Rows 15–16: D1 page bytes at rest and rows written, per message sent, read and webhooked. */
export async function benchFootprint() {
  const total = FOOTPRINT_MESSAGES;
  if (!Number.isInteger(total) || total < 1)
    throw new Error("footprint: --footprint-messages (BENCH_FOOTPRINT_MESSAGES) must be a whole number ≥ 1");
  // An account of its own: every contact it meets is new, as every event is its endpoint's.
  const { apiKey } = await createAccount();
  log(`footprint: ${fmt(total)} messages, one endpoint for ${EVENTS.join(", ")} …`);
  const receiver = await startReceiver(() => ({ status: 200 }));
  const endpointId = await createEndpoint(apiKey, receiver, "/footprint", EVENTS);
  try {
    const sessionId = await connectedSession(apiKey);
    const to = numbers(total, 0);
    const before = await quietCounters();
    const bytesBefore = await d1PageBytes();
    const started = performance.now();
    const sent = new Set();
    for (let from = 0; from < total; from += PER_SEND) {
      const { messages } = await send(apiKey, sessionId, to.slice(from, from + PER_SEND), 0, CONTENT);
      for (const m of messages) sent.add(m.id);
    }
    log(`footprint: sent in ${fmt((performance.now() - started) / 1000, 1)} s; waiting for the webhooks …`);
    const arrived = await waitForDeliveries(receiver, sent);
    if (arrived.stalled) {
      const value = `stalled (${arrived.stalled}): ${arrived.counts}`;
      row(`D1 bytes per message at rest (${fmt(total)} msgs)`, value, `<= ${fmt(BYTES_TARGET)} B`, false);
      row(`D1 rows written per message (${fmt(total)} msgs)`, value, `<= ${ROWS_TARGET}`, false);
      return;
    }
    const after = await quietCounters();
    const bytesAfter = await d1PageBytes();
    const change = d1Change(before, after);
    const bytes = (bytesAfter.total - bytesBefore.total) / total;
    const rowsWritten = change.rowsWritten / total;
    log(
      `footprint: all read and ${fmt(3 * total)} webhooks in ${fmt(arrived.ms / 1000, 1)} s; D1 page bytes ` +
        `${fmt(bytesBefore.total)} → ${fmt(bytesAfter.total)} over ${bytesAfter.files} file(s); ` +
        `${fmt(change.rowsWritten)} rows written, ${fmt(change.statements)} statements`,
    );
    logBreakdown(bytesBefore, bytesAfter, total);
    const good = arrived.problems.length === 0;
    if (!good) log(`footprint: ${arrived.problems.join("; ")}`);
    row(
      `D1 bytes per message at rest (${fmt(total)} msgs, 3 webhooks each)`,
      `${fmt(bytes)} B (${fmt(bytesAfter.total - bytesBefore.total)} B of pages)`,
      `<= ${fmt(BYTES_TARGET)} B`,
      bytes <= BYTES_TARGET && good,
    );
    row(
      `D1 rows written per message (send → read, 3 webhooks each)`,
      `${fmt(rowsWritten, 1)} (${fmt(change.rowsWritten)} rows; ${fmt(change.statements / total, 3)} statements/msg)`,
      `<= ${ROWS_TARGET}`,
      rowsWritten <= ROWS_TARGET && good,
    );
  } finally {
    await api("DELETE", `/v1/webhooks/${endpointId}`, { token: apiKey, retry: true, accept: [404] });
    await receiver.close();
    await cleanUp();
  }
}

/**
 * Waits until the receiver has each of {@link EVENTS} for every message in `sent` (so every
 * message is `read`). Returns `{ ms, problems }` (deliveries missing a signature, answered twice,
 * or for another message), or `{ stalled, counts }` when no delivery came for {@link STALL_MS}.
 */
async function waitForDeliveries(receiver, sent) {
  const started = performance.now();
  const byType = new Map(EVENTS.map((type) => [type, new Set()]));
  let seen = 0;
  let lastArrivalAt = started;
  let nextLogAt = started + 10_000;
  const counts = () => EVENTS.map((type) => `${fmt(byType.get(type).size)} ${type}`).join(", ");
  for (;;) {
    for (const { event } of receiver.got.slice(seen)) byType.get(event.type)?.add(event.data.id);
    const now = performance.now();
    if (receiver.got.length > seen) lastArrivalAt = now;
    seen = receiver.got.length;
    if (EVENTS.every((type) => byType.get(type).size >= sent.size)) break;
    if (now - lastArrivalAt >= STALL_MS)
      return { stalled: `no delivery for ${STALL_MS / 1000} s`, counts: counts() };
    if (now >= nextLogAt) {
      log(`  ${fmt((now - started) / 1000)} s: ${counts()} of ${fmt(sent.size)}`);
      nextLogAt = now + 10_000;
    }
    await sleep(200);
  }
  const ms = performance.now() - started;
  const problems = [];
  const unverified = receiver.got.filter((r) => !r.verified).length;
  if (unverified > 0) problems.push(`${unverified} deliveries whose signature did not verify`);
  const duplicates = receiver.got.length - 3 * sent.size;
  if (duplicates > 0) problems.push(`${duplicates} deliveries more than one per event`);
  const strangers = receiver.got.filter((r) => !sent.has(r.event.data.id)).length;
  if (strangers > 0) problems.push(`${strangers} deliveries for messages this step did not send`);
  return { ms, problems };
}
