import { z } from "zod";
import type { Db } from "../db/client";
import { apiKeyStates, type CredentialState, linkTokenStates } from "../db/queries/credentials";

/**
 * The credential behind each live socket, so that a socket never outlives it (docs/security.md,
 * Live sockets). A socket is opened with an API key or a link token, and closes when that one
 * stops working: at its expiry (a `socket_expiry` deadline of the session's alarm), at its
 * revocation (the revoke tells the session objects, live-revocation.ts), and, should that call
 * not arrive, before the next frame, which is sent only to sockets whose credential D1 still
 * holds live.
 */

/**
 * What opened a live socket: an API key (`key`) or a link token (`link`), by its id (the
 * `api_keys` or `link_tokens` row), valid until `expiresAt` (epoch ms; null: a key that does not
 * expire). Kept with the socket through hibernation, as its attachment and its tag ({@link credentialTag}).
 */
export interface LiveCredential {
  kind: "key" | "link";
  id: string;
  expiresAt: number | null;
}

/** Why a credential stopped working. */
export type Lapse = "revoked" | "expired";

/** The header the Worker's live route tells the object a socket's {@link LiveCredential} with (internal only). */
export const CREDENTIAL_HEADER = "X-Live-Credential";

// Tags are at most 256 characters (Durable Objects WebSocket API, `acceptWebSocket`).
const CredentialShape = z.strictObject({
  kind: z.enum(["key", "link"]),
  id: z.string().min(1).max(64),
  expiresAt: z.int().nonnegative().nullable(),
});

/** {@link CREDENTIAL_HEADER}'s value for `credential`: its JSON. */
export function credentialHeader(credential: LiveCredential): string {
  return JSON.stringify(credential);
}

/** The credential {@link CREDENTIAL_HEADER} names, or null when it is missing or malformed. */
export function credentialOfRequest(request: Request): LiveCredential | null {
  return parseCredential(request.headers.get(CREDENTIAL_HEADER));
}

/** A socket attachment's (or header's JSON) credential, or null when it holds none. */
export function parseCredential(value: unknown): LiveCredential | null {
  let json = value;
  if (typeof value === "string") {
    try {
      json = JSON.parse(value);
    } catch {
      return null;
    }
  }
  const parsed = CredentialShape.safeParse(json);
  return parsed.success ? parsed.data : null;
}

/** The hibernation tag of the sockets a credential opened: `key:<id>` or `link:<id>`. */
export function credentialTag(credential: Pick<LiveCredential, "kind" | "id">): string {
  return `${credential.kind}:${credential.id}`;
}

/** Close code of a socket whose API key was revoked or expired (4000–4999 are the application's, RFC 6455 §7.4.2). */
export const CLOSE_KEY_LAPSED = 4401;
/** Close code of a socket whose link token was revoked (`DELETE …/link-url`). */
export const CLOSE_LINK_REVOKED = 4403;
/** Close code of a socket whose link token expired. */
export const CLOSE_LINK_EXPIRED = 4410;

/**
 * The close code and reason of a socket whose credential lapsed: 4401 `key revoked` or
 * `key expired`, 4403 `link revoked`, 4410 `link expired`.
 */
export function lapseClose(kind: LiveCredential["kind"], lapse: Lapse): { code: number; reason: string } {
  if (kind === "key") return { code: CLOSE_KEY_LAPSED, reason: `key ${lapse}` };
  return lapse === "revoked"
    ? { code: CLOSE_LINK_REVOKED, reason: "link revoked" }
    : { code: CLOSE_LINK_EXPIRED, reason: "link expired" };
}

/** Which of a set of credentials lapsed by `now` (epoch ms): tag ({@link credentialTag}) → why. */
export type LapseCheck = (credentials: LiveCredential[], now: number) => Promise<Map<string, Lapse>>;

/**
 * The {@link LapseCheck} against D1: a credential whose row is revoked, or gone (a token goes with
 * its session), has lapsed as `revoked`; one past its `expires_at` as `expired`. One read per
 * kind present, by primary key, in the database `database` names (the session's account's; null
 * once the session is gone, when nothing is judged: its watchers are closed with it).
 * @throws when D1 cannot be read.
 */
export function lapsedInD1(database: () => Promise<Db | null>): LapseCheck {
  return async (credentials, now) => {
    const db = await database();
    if (!db) return new Map();
    const ids = (kind: LiveCredential["kind"]) => [
      ...new Set(credentials.filter((c) => c.kind === kind).map((c) => c.id)),
    ];
    const [keyIds, linkIds] = [ids("key"), ids("link")];
    const [keys, links] = await Promise.all([
      keyIds.length > 0 ? apiKeyStates(db, keyIds) : [],
      linkIds.length > 0 ? linkTokenStates(db, linkIds) : [],
    ]);
    const lapsed = new Map<string, Lapse>();
    const judge = (kind: LiveCredential["kind"], wanted: string[], states: CredentialState[]) => {
      const byId = new Map(states.map((state) => [state.id, state]));
      for (const id of wanted) {
        const state = byId.get(id);
        const lapse =
          !state || state.revokedAt !== null
            ? "revoked"
            : state.expiresAt !== null && state.expiresAt <= now
              ? "expired"
              : null;
        if (lapse) lapsed.set(credentialTag({ kind, id }), lapse);
      }
    };
    judge("key", keyIds, keys);
    judge("link", linkIds, links);
    return lapsed;
  };
}
