// The Drizzle tables, one file per family; import them from here (`../db/schema`). drizzle-kit
// reads the tables through this file too (drizzle.config.ts), so a table not exported here gets
// no migration.
//
// Conventions: ids are uuid strings; times are integer milliseconds since the epoch (UTC) and become
// ISO 8601 strings only in responses (lib/time.ts); money is integer minor units (lib/money.ts).

export {
  accounts,
  apiKeys,
  DEFAULT_MAX_DRAFT_RECIPIENTS,
  DEFAULT_MAX_SESSIONS,
  idempotencyKeys,
} from "./accounts";
export {
  ARCHIVE_KINDS,
  type ArchiveKind,
  archivedMessages,
  archivedOtps,
  type MessageArchiveRow,
  messageArchives,
} from "./archives";
export { type AccountUsageRow, accountUsage, ledgerEntries } from "./billing";
export {
  type CampaignPayload,
  type CampaignRecipientRow,
  type CampaignRow,
  type CampaignTemplate,
  campaignRecipients,
  campaigns,
} from "./campaigns";
export { cloudApiNumbers } from "./cloud-api";
export { type ContactCheckRow, contactChecks } from "./contact-checks";
export {
  type ContactRow,
  contactIdentifiers,
  contacts,
  IDENTIFIER_KINDS,
  type IdentifierKind,
} from "./contacts";
export { type ErasureRow, erasures } from "./erasures";
export {
  EVENT_TYPE_CODES,
  type EventRow,
  events,
  LISTED_EVENT_TYPE_CONDITION,
  UNLISTED_EVENT_TYPES,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from "./events";
export {
  LISTED_CONDITION,
  LISTED_DIRECTION,
  LISTED_STATUSES,
  type MessageRow,
  type MessageStatus,
  type MessageType,
  messages,
  UNLISTED_TYPE,
} from "./messages";
export { type OptOutRow, optOuts } from "./opt-outs";
export {
  apps,
  type OtpTemplate,
  otpAttempts,
  otpSends,
  otpStatsHours,
  otps,
  otpVerifyTimes,
  REVERSE_GUESS_OUTCOMES,
  reverseGuesses,
} from "./otp";
export { linkTokens, sessions } from "./sessions";
export { type MessageTemplateRow, messageTemplateSyncs, messageTemplates } from "./templates";
