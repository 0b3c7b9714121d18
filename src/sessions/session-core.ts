import { ConfigError, type GatewayKind, gatewaySettingsOf, readConfig } from "../config";
import { databaseFor } from "../db/databases";
import { Outbox } from "../delivery/outbox";
import { KeptReceipts } from "../delivery/receipts";
import { createGateway } from "../gateways";
import type { ChatGateway } from "../gateways/gateway";
import { SandboxGateway } from "../gateways/sandbox";
import { Deadlines } from "./deadlines";
import { GatewayHealth } from "./gateway-health";
import { LiveWatchers } from "./live";
import { lapsedInD1 } from "./live-credentials";
import { SessionStore, type StoredSession } from "./session-store";
import { applySchema } from "./storage-schema";

/**
 * What every part of one session object shares: its records in the object's SQLite storage (the
 * session, the outbox and its kept receipts, the deadlines behind the alarm, the gateway's health), its live watchers,
 * its gateway, and the chain that runs its state changes one at a time.
 *
 * The parts (session-link.ts, session-moves.ts, dispatch-host.ts) take this instead of the
 * object itself: every public method of the `ChatSession` class is RPC API, so nothing else may
 * need to be one.
 */
export class SessionCore {
  readonly sql: SqlStorage;
  readonly store: SessionStore;
  readonly outbox: Outbox;
  readonly receipts: KeptReceipts;
  readonly deadlines: Deadlines;
  readonly health: GatewayHealth;
  readonly live: LiveWatchers;
  /** Tail of the chain that runs state changes one at a time (gateway calls and D1 writes await). */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ctx: DurableObjectState,
    readonly env: Env,
  ) {
    this.sql = ctx.storage.sql;
    this.store = new SessionStore(this.sql, () => readConfig(env).CHATAPP_GATEWAY);
    this.outbox = new Outbox(this.sql);
    this.receipts = new KeptReceipts(this.sql);
    this.deadlines = new Deadlines(this.sql, ctx.storage);
    this.health = new GatewayHealth(this.sql);
    this.live = new LiveWatchers(
      ctx,
      lapsedInD1(async () => {
        const state = this.store.state();
        return state && (await databaseFor(env, state.account_id));
      }),
    );
  }

  /**
   * Whether this object holds a session. Its tables are created with the session and dropped with
   * it, so the object of a deleted (or never created) session keeps no storage however it is
   * called, and every path checks this before touching storage.
   */
  get stored(): boolean {
    return this.store.held;
  }

  /**
   * Brings the object's storage to the schema's version (storage-schema.ts `applySchema`: every
   * table of a session for a new one, the migrations it lacks for a stored one; nothing when it
   * is current); from now on the object holds a session. Run when a session is created and on
   * every wake of an object that holds one.
   */
  setUp(): void {
    applySchema(this.ctx.storage);
    this.store.noteHeld();
  }

  /** The session as the object stores it, or null when it holds none (see {@link SessionStore}). */
  state(): StoredSession | null {
    return this.store.state();
  }

  /** The session. @throws Error when the object holds none (callers have checked {@link state}). */
  current(): StoredSession {
    return this.store.current();
  }

  /**
   * The name of the session's gateway: the one it was created on, or for an object that holds no
   * session, the deployment's `CHATAPP_GATEWAY`.
   */
  gatewayName(): GatewayKind {
    return this.state()?.gateway ?? readConfig(this.env).CHATAPP_GATEWAY;
  }

  /**
   * The session's gateway ({@link gatewayName}); the sandbox one lives in this object.
   * @throws Error for the sandbox when the object holds no session, and ConfigError when the
   *   deployment no longer enables the session's gateway (`CHATAPP_GATEWAYS`; the call answers
   *   500 `gateway_misconfigured`).
   */
  gateway(): ChatGateway {
    const name = this.gatewayName();
    const settings = gatewaySettingsOf(readConfig(this.env), name);
    if (!settings)
      throw new ConfigError("CHATAPP_GATEWAYS", `does not enable ${name}, which this session uses`);
    return createGateway(
      settings,
      () => {
        const state = this.current();
        const config = readConfig(this.env);
        return new SandboxGateway(
          this.sql,
          state.origin,
          state.id,
          { deliveredMs: config.SANDBOX_DELIVERED_MS, readMs: config.SANDBOX_READ_MS },
          { allowLocalhost: config.MEDIA_ALLOW_HTTP_LOCALHOST },
        );
      },
      () => this.store.cloudApiNumber(),
    );
  }

  /**
   * Runs state changes one at a time: `fn` starts once the previous change has settled (resolved
   * or rejected), so a gateway call or a D1 write awaited inside one change cannot interleave
   * with another. @returns what `fn` returns; its rejection reaches the caller only.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Drops everything this object stores (its tables too) and its alarm. */
  async forget(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    // Work still under way in this instance (a dispatcher run, an alarm) sees no session from now
    // on and stops before touching storage.
    this.store.forget();
  }
}
