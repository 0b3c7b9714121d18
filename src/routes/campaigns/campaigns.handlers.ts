import type { RouteHandler } from "@hono/zod-openapi";
import { requireBalance } from "../../billing/balance";
import { priceOf } from "../../billing/prices";
import { cancelCampaign, pauseCampaign, resumeCampaign } from "../../campaigns/control";
import { requireCampaignRecipients } from "../../campaigns/recipient-kinds";
import { checkRecipients, type FieldProblem } from "../../campaigns/recipients";
import { startCampaign } from "../../campaigns/start";
import { requireCampaignTemplate } from "../../campaigns/template";
import { readConfig } from "../../config";
import type { Db } from "../../db/client";
import {
  addRecipients as addTo,
  deleteDraftCampaign,
  findCampaign,
  insertCampaign,
  listCampaigns,
  listRecipients as listRecipientPage,
} from "../../db/queries/campaigns";
import type { LimitUsage } from "../../db/queries/limits";
import { recipientArchivesOf } from "../../db/queries/recipient-archives";
import { findSessions } from "../../db/queries/sessions";
import type { CampaignPayload, CampaignRow } from "../../db/schema";
import type { AppEnv } from "../../env";
import { relistErasedOptOuts } from "../../erasures/opt-outs";
import { ApiError, accountLimitReached } from "../../errors";
import type { ContactCard } from "../../lib/contact-cards";
import type { Interactive } from "../../lib/interactive";
import type { Location } from "../../lib/location";
import { requireMediaUrlAllowed } from "../../media/fetch";
import { isMediaType } from "../../media/rules";
import { discardMedia, type StoredMedia, storeMedia } from "../../media/store";
import { requireGatewaySends } from "../../messages/gateway-types";
import { toCampaignRecord, toRecipientRecord } from "../../presenters/campaign";
import { pageLinks } from "../paging";
import type * as routes from "./campaigns.routes";
import { DEFAULT_DELAY_MS } from "./campaigns.schemas";

const noCampaign = () => new ApiError("not_found", "No such campaign.");

/**
 * Throws 404 `campaign_recipients_archived`, with the ids of the archives holding them
 * (`archive_ids`), when the hourly job moved campaign `id`'s recipients to R2 (docs/retention.md, Archives).
 */
async function assertRecipientsKept(db: Db, accountId: string, id: string): Promise<void> {
  const archiveIds = await recipientArchivesOf(db, accountId, id);
  if (archiveIds.length === 0) return;
  throw new ApiError(
    "campaign_recipients_archived",
    `The campaign finished before the account's message retention and its recipients were moved to ${archiveIds.length === 1 ? "archive" : "archives"} ${archiveIds.join(", ")}: GET /v1/account/archives/{id} downloads them; the campaign's stats stay.`,
    { extra: { archive_ids: archiveIds } },
  );
}
const notDraft = (status: string) =>
  new ApiError(
    "campaign_not_draft",
    `The campaign is ${status}; only a draft can change its recipients or be deleted.`,
  );

/** 409 `account_limit_reached`: the recipients would take the account's drafts past their limit. */
const draftLimitReached = (refused: LimitUsage & { adding: number }) =>
  accountLimitReached(
    { ...refused, requested: refused.adding },
    `adding ${refused.adding} recipients to its drafts`,
  );

/** What every message of a location, contacts or interactive campaign carries; null for other types. */
function payloadOf(body: {
  type: string;
  location?: Location;
  contacts?: ContactCard[];
  interactive?: Interactive;
}): CampaignPayload | null {
  if (body.type === "location" && body.location) return { location: body.location };
  if (body.type === "contacts" && body.contacts) return { contacts: body.contacts };
  if (body.type === "interactive" && body.interactive) return { interactive: body.interactive };
  return null;
}

/** 422 with each problem under its field path, as request validation reports them. */
function invalid(problems: FieldProblem[]): ApiError {
  const fields: Record<string, string[]> = Object.create(null);
  for (const { path, message } of problems) {
    const key = path.join(".");
    fields[key] = [...(fields[key] ?? []), message];
  }
  return new ApiError("validation_failed", "The request has invalid fields.", { fields });
}

export const create: RouteHandler<typeof routes.create, AppEnv> = async (c) => {
  const body = c.req.valid("json");
  // The schema takes the local-development exception; the deployment decides (src/media/fetch.ts).
  requireMediaUrlAllowed(body.media_url, { allowLocalhost: readConfig(c.env).MEDIA_ALLOW_HTTP_LOCALHOST });
  const { db, principal } = c.var;
  const found = new Map(
    (await findSessions(db, principal.accountId, body.chatapp_session_ids)).map((s) => [s.id, s]),
  );
  for (const id of body.chatapp_session_ids) {
    const session = found.get(id);
    if (!session) throw new ApiError("not_found", `No such session: ${id}.`);
    if (session.status !== "connected")
      throw new ApiError(
        "session_not_connected",
        `Session ${id} is ${session.status}; every session of a campaign must be connected.`,
      );
  }
  const template = body.type === "template" ? (body.template ?? null) : null;
  const fallback = readConfig(c.env).CHATAPP_GATEWAY;
  for (const session of found.values()) requireGatewaySends(session.gateway ?? fallback, body);
  if (template) await requireCampaignTemplate(c.env, db, principal.accountId, [...found.values()], template);
  await requireCampaignRecipients(
    c.env,
    db,
    { accountId: principal.accountId, sessionIds: body.chatapp_session_ids, template },
    body.recipientRows.map((row) => row.toNumber),
  );
  await relistErasedOptOuts(
    c.env,
    db,
    principal.accountId,
    body.recipientRows.map((row) => row.toNumber),
  );
  const delay = body.delay_range ?? {
    min_ms: body.delay_between ?? DEFAULT_DELAY_MS,
    max_ms: body.delay_between ?? DEFAULT_DELAY_MS,
  };
  // Fetched and stored once, for every message of the campaign, and only for an account that can
  // pay one message of its type (docs/security.md, Media).
  let media: StoredMedia | null = null;
  if (isMediaType(body.type) && body.media_url != null) {
    const config = readConfig(c.env);
    const price = priceOf(config, body.type);
    await requireBalance(db, principal.accountId, price, `One ${body.type} message`);
    media = await storeMedia(c.env.MEDIA, body.media_url, body.type, {
      allowLocalhost: config.MEDIA_ALLOW_HTTP_LOCALHOST,
    });
  }
  const now = Date.now();
  const inserted = await withMedia(c.env.MEDIA, media, () =>
    insertCampaign(
      db,
      {
        id: crypto.randomUUID(),
        accountId: principal.accountId,
        name: body.name,
        status: "draft",
        sessionIds: body.chatapp_session_ids,
        type: body.type,
        content: body.content ?? null,
        template,
        payload: payloadOf(body),
        mediaUrl: body.media_url ?? null,
        mediaKey: media?.key ?? null,
        mediaContentType: media?.contentType ?? null,
        delayMinMs: delay.min_ms,
        delayMaxMs: delay.max_ms,
        scheduledAt: body.scheduled_at ? Date.parse(body.scheduled_at) : null,
        sendWindow: body.send_window ?? null,
        checkNumbers: body.check_numbers ?? false,
        simulateTyping: body.simulate_typing ?? false,
        total: 0,
        queued: 0,
        sent: 0,
        delivered: 0,
        read: 0,
        failed: 0,
        replied: 0,
        skipped: 0,
        cost: 0,
        refunded: 0,
        price: 0,
        chargeId: null,
        materialisedSeq: 0,
        startedAt: null,
        completedAt: null,
        createdAt: now,
        updatedAt: now,
      },
      body.recipientRows,
    ),
  );
  if (inserted.refused) throw draftLimitReached(inserted.refused);
  const { campaign, recipients: added } = inserted;
  return c.json({ success: true as const, data: toCampaignRecord(campaign), recipients: added }, 201);
};

/**
 * Runs `insert`, the write of a campaign that holds `media` (a copy just stored for it), and
 * deletes the copy again when no campaign keeps it: `insert` refused (`refused` set, the draft
 * limit) or threw (docs/security.md, Media: a refused campaign leaves no stored copy).
 * @throws what `insert` throws.
 */
async function withMedia<T extends { refused: unknown }>(
  bucket: R2Bucket,
  media: StoredMedia | null,
  insert: () => Promise<T>,
): Promise<T> {
  try {
    const result = await insert();
    if (media && result.refused) await discardMedia(bucket, media.key);
    return result;
  } catch (error) {
    if (media) await discardMedia(bucket, media.key);
    throw error;
  }
}

export const list: RouteHandler<typeof routes.list, AppEnv> = async (c) => {
  const { limit, cursor } = c.req.valid("query");
  const page = { limit, cursor: cursor ?? null };
  const { rows, more } = await listCampaigns(c.var.db, c.var.principal.accountId, page);
  return c.json(
    { success: true as const, data: rows.map(toCampaignRecord), ...pageLinks(c, rows, { ...page, more }) },
    200,
  );
};

export const show: RouteHandler<typeof routes.show, AppEnv> = async (c) => {
  const campaign = await findCampaign(c.var.db, c.var.principal.accountId, c.req.valid("param").id);
  if (!campaign) throw noCampaign();
  return c.json({ success: true as const, data: toCampaignRecord(campaign) }, 200);
};

export const remove: RouteHandler<typeof routes.remove, AppEnv> = async (c) => {
  const { db, principal } = c.var;
  const { id } = c.req.valid("param");
  const deleted = await deleteDraftCampaign(db, principal.accountId, id);
  if (deleted) {
    // Nothing else holds a draft's stored copy (docs/security.md, Media).
    if (deleted.mediaKey) await discardMedia(c.env.MEDIA, deleted.mediaKey);
    return c.body(null, 204);
  }
  const campaign = await findCampaign(db, principal.accountId, id);
  if (!campaign) throw noCampaign();
  throw notDraft(campaign.status);
};

export const addRecipients: RouteHandler<typeof routes.addRecipients, AppEnv> = async (c) => {
  const { db, principal } = c.var;
  const { id } = c.req.valid("param");
  const campaign = await findCampaign(db, principal.accountId, id);
  if (!campaign) throw noCampaign();
  if (campaign.status !== "draft") throw notDraft(campaign.status);
  const { rows, problems } = checkRecipients(campaign, c.req.valid("json").recipients);
  if (problems.length > 0) throw invalid(problems);
  await requireCampaignRecipients(
    c.env,
    db,
    campaign,
    rows.map((row) => row.toNumber),
  );
  await relistErasedOptOuts(
    c.env,
    db,
    principal.accountId,
    rows.map((row) => row.toNumber),
  );
  const added = await addTo(db, principal.accountId, id, rows, Date.now());
  if (!added) throw notDraft("no longer a draft");
  if ("refused" in added) throw draftLimitReached(added.refused);
  return c.json({ success: true as const, data: added }, 200);
};

export const listRecipients: RouteHandler<typeof routes.listRecipients, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  const { limit, cursor } = c.req.valid("query");
  if (!(await findCampaign(c.var.db, c.var.principal.accountId, id))) throw noCampaign();
  const page = { limit, cursor: cursor ?? null };
  const { rows, more } = await listRecipientPage(c.var.db, id, page);
  if (rows.length === 0 && !page.cursor) await assertRecipientsKept(c.var.db, c.var.principal.accountId, id);
  return c.json(
    { success: true as const, data: rows.map(toRecipientRecord), ...pageLinks(c, rows, { ...page, more }) },
    200,
  );
};

/** The four commands that move a campaign: each answers the campaign after it. */
function commandHandler(
  run: (env: Env, db: AppEnv["Variables"]["db"], accountId: string, id: string) => Promise<CampaignRow>,
): RouteHandler<typeof routes.pause, AppEnv> {
  return async (c) => {
    const campaign = await run(c.env, c.var.db, c.var.principal.accountId, c.req.valid("param").id);
    return c.json({ success: true as const, data: toCampaignRecord(campaign) }, 200);
  };
}

export const start = commandHandler(startCampaign);
export const pause = commandHandler(pauseCampaign);
export const resume = commandHandler(resumeCampaign);
export const cancel = commandHandler(cancelCampaign);
