/**
 * What this isolate has asked of D1 since it started: `statements` counts every result D1
 * returned (one per statement of a batch, one per single `run`/`all`/`first`/`raw`), `batches`
 * the round trips, and `rowsRead`/`rowsWritten` sum the `meta` D1 returns (`first` and `raw`
 * return none, so their rows are not in the sums). `isolate` is a random id chosen at the first
 * count: a new id means a new isolate, counting from zero.
 *
 * The counts live in module scope, so they cover one isolate. Under `wrangler dev` (workerd) the
 * Worker's requests, its queue consumers and its Durable Objects all run in the Worker's one
 * isolate, so `GET /admin/metrics` sees the whole deployment's D1 work; deployed, each isolate
 * (and each object's machine) counts its own, and the endpoint reports the one that answered.
 */
export interface D1Counts extends D1Work {
  isolate: string;
  /** The same counts for each database, by its binding's name (`DB`, `DB_ACCOUNTS_0`, …). */
  databases: Record<string, D1Work>;
}

/** Statements, round trips and rows of D1 work. */
export interface D1Work {
  statements: number;
  batches: number;
  rowsRead: number;
  rowsWritten: number;
}

const none = (): D1Work => ({ statements: 0, batches: 0, rowsRead: 0, rowsWritten: 0 });
const counts = { isolate: "", ...none() };
const byDatabase = new Map<string, D1Work>();

/** This isolate's D1 counts so far (a copy). */
export function d1Counts(): D1Counts {
  if (!counts.isolate) counts.isolate = crypto.randomUUID();
  return {
    ...counts,
    databases: Object.fromEntries([...byDatabase].map(([name, work]) => [name, { ...work }])),
  };
}

/** Counts one round trip to database `name` that returned `results` (with `meta` when D1 gives it). */
function note(name: string, results: { meta?: Partial<D1Meta> }[]): void {
  if (!counts.isolate) counts.isolate = crypto.randomUUID();
  const own = byDatabase.get(name) ?? none();
  byDatabase.set(name, own);
  for (const work of [counts, own]) {
    work.batches++;
    for (const result of results) {
      work.statements++;
      work.rowsRead += result.meta?.rows_read ?? 0;
      work.rowsWritten += result.meta?.rows_written ?? 0;
    }
  }
}

/** The binding's statement behind each counting statement, for `batch`. */
const bound = new WeakMap<D1PreparedStatement, D1PreparedStatement>();

function countingStatement(name: string, statement: D1PreparedStatement): D1PreparedStatement {
  const note1 = (result: { meta?: Partial<D1Meta> }) => note(name, [result]);
  const counting = {
    bind: (...values: unknown[]) => countingStatement(name, statement.bind(...values)),
    run: async () => {
      const result = await statement.run();
      note1(result);
      return result;
    },
    all: async () => {
      const result = await statement.all();
      note1(result);
      return result;
    },
    first: async (column?: string) => {
      const row = column === undefined ? await statement.first() : await statement.first(column);
      note1({});
      return row;
    },
    raw: async (options?: { columnNames?: boolean }) => {
      const rows = options?.columnNames
        ? await statement.raw({ columnNames: true })
        : await statement.raw(options as { columnNames?: false } | undefined);
      note1({});
      return rows;
    },
  } as unknown as D1PreparedStatement;
  bound.set(counting, statement);
  return counting;
}

/**
 * `d1` with every statement counted, under its binding's name `name` too (see {@link D1Counts}); otherwise the binding itself:
 * same results, same errors, and a batch is still the binding's one transaction. `exec` and
 * `withSession` pass through uncounted (nothing here uses them).
 */
export function countingD1(d1: D1Database, name: string): D1Database {
  return {
    prepare: (query: string) => countingStatement(name, d1.prepare(query)),
    batch: async <T = unknown>(statements: D1PreparedStatement[]) => {
      const results = await d1.batch<T>(statements.map((s) => bound.get(s) ?? s));
      note(name, results);
      return results;
    },
    exec: (query: string) => d1.exec(query),
    withSession: (constraint?: D1SessionBookmark | D1SessionConstraint) => d1.withSession(constraint),
    dump: () => d1.dump(),
  } as D1Database;
}
