/**
 * Kinds of deadline a session object's alarm runs: QR rotation and timeout, a wake-up for the
 * dispatcher (pacing gaps, scheduled sends, retry backoff), the expiry of waiting messages, the
 * sandbox's delivery receipts (`ref` is then the message id), the check of a real gateway's
 * view of the session, the removal of a failed session's gateway session (`gateway_release`,
 * tried again until the gateway answers), `sync`: a write the object owes D1 (its session row, `ref`
 * `session`, or the outbox's outcomes, `ref` empty) that D1 refused, tried again until D1 has it,
 * and `socket_expiry`: the expiry of the credential that opened live sockets (`ref` is its
 * socket tag, live-credentials.ts `credentialTag`), which closes them; `media_fetch`: a try of
 * an incoming message's media download (`ref` is the message id, incoming-media.ts).
 */
export type DeadlineKind =
  | "qr_rotate"
  | "qr_timeout"
  | "dispatch"
  | "expire"
  | "ack_delivered"
  | "ack_read"
  | "gateway_check"
  | "gateway_release"
  | "sync"
  | "socket_expiry"
  | "media_fetch";

export interface Deadline {
  kind: DeadlineKind;
  ref: string;
  dueAt: number;
}

/**
 * A session object's table of deadlines behind its single alarm (the cloudflare/agents
 * pattern): work is scheduled as rows, the alarm takes what is due, and {@link rearm} points the
 * alarm at the earliest row left. The time the alarm was armed for is kept too, so an alarm that
 * runs early (as `runDurableObjectAlarm` makes it in tests) still takes what it was set for.
 * Tables `deadlines` (kind, ref, due_at) and `alarm_state` (one row: armed_for), created by
 * storage-schema.ts.
 */
export class Deadlines {
  constructor(
    private readonly sql: SqlStorage,
    private readonly storage: DurableObjectStorage,
  ) {}

  /** Sets (or moves) the deadline `kind`/`ref` to `dueAt` (epoch ms). Call {@link rearm} after. */
  schedule(kind: DeadlineKind, ref: string, dueAt: number): void {
    this.sql.exec(
      `INSERT INTO deadlines (kind, ref, due_at) VALUES (?, ?, ?)
       ON CONFLICT (kind, ref) DO UPDATE SET due_at = excluded.due_at`,
      kind,
      ref,
      dueAt,
    );
  }

  /** Removes the deadline `kind`/`ref`, if any. */
  cancel(kind: DeadlineKind, ref: string): void {
    this.sql.exec("DELETE FROM deadlines WHERE kind = ? AND ref = ?", kind, ref);
  }

  /**
   * Whether the alarm may not point at the earliest deadline: a deadline was written and the
   * object stopped before {@link rearm} (call rearm then).
   */
  stale(): boolean {
    const row = this.sql
      .exec<{ due: number | null; armed: number | null }>(
        "SELECT (SELECT MIN(due_at) FROM deadlines) AS due, (SELECT armed_for FROM alarm_state) AS armed",
      )
      .toArray()[0];
    return (row?.due ?? null) !== (row?.armed ?? null);
  }

  /** When the deadline `kind`/`ref` is due (epoch ms), or null when none is set. */
  dueAt(kind: DeadlineKind, ref: string): number | null {
    const row = this.sql
      .exec<{ due_at: number }>("SELECT due_at FROM deadlines WHERE kind = ? AND ref = ?", kind, ref)
      .toArray()[0];
    return row?.due_at ?? null;
  }

  clear(...kinds: DeadlineKind[]): void {
    for (const kind of kinds) this.sql.exec("DELETE FROM deadlines WHERE kind = ?", kind);
  }

  /** Whether work other than a dispatcher wake-up is due at `now`. */
  anyDue(now: number): boolean {
    return (
      this.sql.exec("SELECT 1 FROM deadlines WHERE due_at <= ? AND kind <> 'dispatch' LIMIT 1", now).toArray()
        .length > 0
    );
  }

  /**
   * Removes and returns the deadlines due by `horizon`, the later of now and the time the alarm
   * was armed for, in due order.
   */
  takeDue(): { horizon: number; due: Deadline[] } {
    const armed = this.sql
      .exec<{ armed_for: number | null }>("SELECT armed_for FROM alarm_state")
      .toArray()[0];
    const horizon = Math.max(Date.now(), armed?.armed_for ?? 0);
    const due = this.sql
      .exec<{ kind: DeadlineKind; ref: string; due_at: number }>(
        "DELETE FROM deadlines WHERE due_at <= ? RETURNING kind, ref, due_at",
        horizon,
      )
      .toArray()
      .map((d) => ({ kind: d.kind, ref: d.ref, dueAt: d.due_at }))
      .sort((a, b) => a.dueAt - b.dueAt);
    return { horizon, due };
  }

  /**
   * Sets the alarm to `at` (epoch ms) without recording it as the time it was armed for: a
   * fallback while an alarm runs, replaced by {@link rearm} when the run ends.
   */
  async armFallback(at: number): Promise<void> {
    await this.storage.setAlarm(at);
  }

  /** Points the alarm at the earliest deadline, or clears it when there is none. */
  async rearm(): Promise<void> {
    const next =
      this.sql.exec<{ due: number | null }>("SELECT MIN(due_at) AS due FROM deadlines").toArray()[0]?.due ??
      null;
    this.sql.exec("INSERT OR REPLACE INTO alarm_state (id, armed_for) VALUES (1, ?)", next);
    if (next === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(next);
  }
}
