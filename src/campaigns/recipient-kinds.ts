import { type GatewayKind, readConfig } from "../config";
import type { Db } from "../db/client";
import { recipientsMatching } from "../db/queries/campaigns";
import { findSessions } from "../db/queries/sessions";
import { findTemplate } from "../db/queries/templates";
import type { CampaignTemplate } from "../db/schema";
import { isPhoneAddress, USER_ID_GLOB } from "../lib/contact-identity";
import {
  gatewayRefusals,
  mergeRefusals,
  recipientNotSupported,
  refusedAmong,
  templateRefusals,
  type UserIdRefusals,
} from "../messages/recipient-kinds";

/*
 * Campaign recipients known by a user id (docs/campaigns.md, Campaigns and docs/contacts.md, Contacts). A
 * recipient's session is picked when its message is made (round-robin, and failover may move it to another of
 * the campaign's sessions), so every session of the campaign must be able to send to each recipient:
 * the strict rule, as for the service window (src/campaigns/service-window.ts). The kinds refused
 * are those of messages/recipient-kinds.ts, the rules a single send follows.
 */

/** Most refused recipients a refusal lists in `recipients`; `refused_count` gives how many. */
export const MAX_REFUSED_LISTED = 100;

/** A campaign's session as the check needs it: its id and gateway (null: the deployment's default). */
interface CampaignSession {
  id: string;
  gateway: GatewayKind | null;
}

/**
 * The kinds of user id a campaign on `sessions` that sends `template` (null for another type)
 * cannot send to, each with why: a kind any session's gateway does not send to
 * (lib/gateway-kinds.ts `sendsToUserIds`), and business-scoped user ids when the template, as any
 * session's cache holds it, is an authentication template with a code button. Reads each
 * session's cached template (at most 20 sessions); a template not in a cache refuses nothing here
 * (src/campaigns/template.ts refuses the campaign).
 */
export async function campaignRefusals(
  env: Env,
  db: Db,
  accountId: string,
  sessions: CampaignSession[],
  template: CampaignTemplate | null,
): Promise<UserIdRefusals> {
  const fallback = readConfig(env).CHATAPP_GATEWAY;
  const refusals = sessions.map((session) =>
    gatewayRefusals(session.gateway ?? fallback, `Session ${session.id}'s gateway`),
  );
  if (template) {
    for (const session of sessions) {
      const row = await findTemplate(db, accountId, session.id, template.name, template.language);
      if (row) refusals.push(templateRefusals(row));
    }
  }
  return mergeRefusals(...refusals);
}

/**
 * Refuses recipients about to be added to a campaign on sessions `sessionIds` (the account's)
 * that sends `template` (null for another type): `addresses`, as they will be stored (E.164
 * numbers and user ids), when any is a user id of a kind {@link campaignRefusals} refuses, before
 * anything is stored. Reads nothing when all are numbers.
 * @throws ApiError `recipient_not_supported` (422) with extension members `recipients` (the first
 *   {@link MAX_REFUSED_LISTED} refused, in the request's order) and `refused_count` (how many).
 */
export async function requireCampaignRecipients(
  env: Env,
  db: Db,
  campaign: { accountId: string; sessionIds: string[]; template: CampaignTemplate | null },
  addresses: readonly string[],
): Promise<void> {
  if (addresses.every(isPhoneAddress)) return;
  const found = new Map(
    (await findSessions(db, campaign.accountId, campaign.sessionIds)).map((session) => [session.id, session]),
  );
  const sessions = campaign.sessionIds.flatMap((id) => found.get(id) ?? []);
  const refusals = await campaignRefusals(env, db, campaign.accountId, sessions, campaign.template);
  const refused = refusedAmong(refusals, addresses);
  if (refused.length === 0) return;
  throw recipientNotSupported(refusals, refused.slice(0, MAX_REFUSED_LISTED), refused.length);
}

/**
 * Refuses to start campaign `campaign` when any of its stored recipients is a user id of a kind
 * {@link campaignRefusals} refuses on `sessions` (the campaign's, as the start found them): the
 * rule {@link requireCampaignRecipients} held when they were added, checked again as the start
 * finds the sessions (one of the deployment's default gateway follows that default) and the
 * template (its caches were just read again). One statement over the recipients
 * (db/queries/campaigns.ts `recipientsMatching`), and none when no kind is refused.
 * @throws ApiError `recipient_not_supported` (422) as {@link requireCampaignRecipients}, the
 *   refused listed in the order they were added.
 */
export async function requireStoredRecipients(
  env: Env,
  db: Db,
  campaign: { id: string; accountId: string; template: CampaignTemplate | null },
  sessions: CampaignSession[],
): Promise<void> {
  const refusals = await campaignRefusals(env, db, campaign.accountId, sessions, campaign.template);
  const globs = [...refusals.keys()].map((kind) => USER_ID_GLOB[kind]);
  const { addresses, count } = await recipientsMatching(db, campaign.id, globs, MAX_REFUSED_LISTED);
  if (count > 0) throw recipientNotSupported(refusals, addresses, count);
}
