import { z } from "zod";
import { type Cap, type HealthReading, secondsToEpochMs, type Timelock } from "../../lib/session-health";
import { GatewayError } from "../gateway";
import { type GatewayHttp, gatewayRequest } from "../http";

/*
 * What WAHA tells of the limits WhatsApp puts on a session's account (docs/sessions.md, Session health), by
 * WAHA's own DTOs (src/structures/sessions.dto.ts): `MeInfo.reachoutTimelock`
 * (`ReachoutTimelockData`: `enforcementType`, `isActive`, `timeEnforcementEnds` in Unix seconds or
 * null; null when no enforcement was seen) and `MeInfo.messageCapping` (`MessageCappingData`:
 * `cappingStatus`, `totalQuota` (-1: no cap), `usedQuota`, `cycleStart`/`cycleEnd` in Unix seconds
 * or null, `mvStatus`, `oteStatus`; null until fetched), both of `GET /api/sessions/{session}`,
 * and `GET /api/sessions/{session}/capping`, which fetches the capping afresh on the GOWS engine
 * (devlikeapro/waha#2186). Older WAHA versions have neither field: nothing is told then.
 */

/** `ReachoutTimelockData`. `enforcementType` is an open set, informational only. */
export const ReachoutTimelock = z.looseObject({
  enforcementType: z.string().nullish(),
  isActive: z.boolean(),
  timeEnforcementEnds: z.number().nullable(),
});

/** `MessageCappingData`. `cappingStatus` is an open set (NONE, FIRST_WARNING, SECOND_WARNING, CAPPED). */
export const MessageCapping = z.looseObject({
  cappingStatus: z.string().min(1),
  totalQuota: z.number().int(),
  usedQuota: z.number().int(),
  cycleStart: z.number().nullish(),
  cycleEnd: z.number().nullish(),
});

/** The `me` fields of `SessionInfo` read here. */
const SessionMe = z.looseObject({
  me: z
    .looseObject({
      reachoutTimelock: ReachoutTimelock.nullish(),
      messageCapping: MessageCapping.nullish(),
    })
    .nullish(),
});

/**
 * The session's health as WAHA tells it: `timelock` from `me.reachoutTimelock` (null: none seen;
 * absent: this WAHA cannot tell), `cap` from `GET /api/sessions/{session}/capping` or, where that
 * fails (not served by the engine), `me.messageCapping` (null or absent: not known yet).
 * `quality` is the Cloud API's alone. @throws GatewayError when the session cannot be read.
 */
export async function readHealth(http: GatewayHttp, sessionId: string): Promise<HealthReading> {
  const name = encodeURIComponent(sessionId);
  const info = await gatewayRequest(http, {
    method: "GET",
    path: `/api/sessions/${name}`,
    schema: SessionMe,
  });
  const me = info.me;
  const reading: HealthReading = {};
  if (me && me.reachoutTimelock !== undefined) reading.timelock = timelockOf(me.reachoutTimelock);
  let capping = me?.messageCapping ?? null;
  try {
    capping = await gatewayRequest(http, {
      method: "GET",
      path: `/api/sessions/${name}/capping`,
      schema: MessageCapping,
    });
  } catch (error) {
    // Not served by this engine (NOWEB, WEBJS: WAHA answers "not implemented" with a 4xx or 501)
    // or this version, or failed now: the session's `me`, read a moment ago, is the answer.
    if (!(error instanceof GatewayError)) throw error;
  }
  if (capping) reading.cap = capOf(capping);
  return reading;
}

function timelockOf(data: z.output<typeof ReachoutTimelock> | null): Timelock | null {
  return data && { active: data.isActive, until: secondsToEpochMs(data.timeEnforcementEnds) };
}

function capOf(data: z.output<typeof MessageCapping>): Cap {
  return {
    level: data.cappingStatus,
    used: data.usedQuota,
    total: data.totalQuota,
    cycleEnd: secondsToEpochMs(data.cycleEnd),
  };
}

/**
 * Whether a failed send call is WhatsApp's error 463 (reach-out timelock), which WAHA passes on as
 * a 500 whose `exception.message` reads "server returned error 463" (devlikeapro/waha#1992,
 * devlikeapro/waha#2219).
 */
export function isReachoutTimelocked(error: unknown): boolean {
  if (!(error instanceof GatewayError)) return false;
  const text = `${error.message} ${typeof error.body === "string" ? error.body : JSON.stringify(error.body)}`;
  return /\berror 463\b/.test(text);
}
