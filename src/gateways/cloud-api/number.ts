import { z } from "zod";
import { toE164 } from "../../lib/phone";
import type { Quality } from "../../lib/session-health";
import { type GatewayHttp, gatewayRequest } from "../http";

/*
 * Reading a business number: `GET /{Version}/{Phone-Number-ID}` (operation `getPhoneNumberById`,
 * response schema `PhoneNumberInfo`). The document lists `display_phone_number`, `verified_name`
 * and `quality_rating`; it leaves out `throughput`, which Meta's "Throughput" page documents on
 * the same node (`throughput.level`: `STANDARD`, `HIGH` or `NOT_APPLICABLE`) and which is asked for
 * by name in `fields`.
 */

/** Messages per second of a number at the standard tier (Meta, "Throughput": "up to 80"). */
export const STANDARD_THROUGHPUT_MPS = 80;
/** Messages per second of a number Meta upgraded to the higher tier ("up to 1,000"). */
export const HIGH_THROUGHPUT_MPS = 1000;

const PhoneNumberInfo = z.looseObject({
  display_phone_number: z.string().min(1),
  verified_name: z.string().optional(),
  quality_rating: z.string().optional(),
  throughput: z.looseObject({ level: z.string() }).optional(),
});

/** A business number as the session shows it: E.164, Meta's verified name, quality and pace. */
export interface NumberInfo {
  /** E.164, from `display_phone_number` (e.g. `+1 555-555-5555` → `+15555555555`). */
  phoneNumber: string;
  displayName: string | null;
  /** `GREEN`, `YELLOW`, `RED` or `NA` (`PhoneNumberInfo.quality_rating`), or null when not given. */
  qualityRating: string | null;
  /** {@link HIGH_THROUGHPUT_MPS} at the `HIGH` level, else {@link STANDARD_THROUGHPUT_MPS}. */
  throughputMps: number;
}

/** The fields asked for: the document's defaults and Meta's `throughput`. */
const FIELDS = "id,display_phone_number,verified_name,quality_rating,throughput";

/**
 * Reads number `phoneNumberId` with the caller's token.
 * @throws GatewayError as `gatewayRequest` does: Meta's refusal (a bad id, a bad token: error 190)
 *   is permanent, with Meta's error in its body (see graph.ts `graphErrorOf`).
 */
export async function readNumber(http: GatewayHttp, phoneNumberId: string): Promise<NumberInfo> {
  const info = await gatewayRequest(http, {
    method: "GET",
    path: `/${encodeURIComponent(phoneNumberId)}?fields=${FIELDS}`,
    schema: PhoneNumberInfo,
  });
  const digits = info.display_phone_number.replace(/[^0-9]/g, "");
  return {
    phoneNumber: toE164(digits) ?? `+${digits}`,
    displayName: info.verified_name ?? null,
    qualityRating: info.quality_rating ?? null,
    throughputMps: info.throughput?.level === "HIGH" ? HIGH_THROUGHPUT_MPS : STANDARD_THROUGHPUT_MPS,
  };
}

/** Meta's `quality_rating` as a session's `health.quality`: GREEN, YELLOW, RED; anything else (NA) null. */
export function qualityOf(rating: string | null): Quality | null {
  switch (rating) {
    case "GREEN":
      return "green";
    case "YELLOW":
      return "yellow";
    case "RED":
      return "red";
    default:
      return null;
  }
}
