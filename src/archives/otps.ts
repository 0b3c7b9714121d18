import { type ArchivableOtp, archivableOtps, recordOtpArchive } from "../db/queries/otp-archives";
import { toOtpRecord } from "../presenters/otp";
import type { ArchiveSource } from "./source";

/**
 * OTPs as the job archives them (docs/retention.md, Archives): final ones past the account's retention, each
 * line an OTP as `GET /v1/otp/{id}` showed it then, with its attempts (src/db/queries/otp-archives.ts
 * reads and moves them, adding them to their app's OTP statistics). Archived before messages, so
 * that the messages their codes went out in may follow in the same run.
 */
export const OTP_SOURCE: ArchiveSource<ArchivableOtp> = {
  kind: "otps",
  read: archivableOtps,
  line: (row, now) => JSON.stringify(toOtpRecord(row, now)),
  record: recordOtpArchive,
};
